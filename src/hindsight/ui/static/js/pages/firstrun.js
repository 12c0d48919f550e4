// The first-run page: shown in place of the namespace list while nothing is stored anywhere
// the key can see. It shows the first call of the README's walk-through (first-call.sh, kept
// equal to it by tests/test_walkthrough.py) with this service's address filled in.

import { h } from "../dom.js";

const README_ADDRESS = "http://127.0.0.1:${HINDSIGHT_PORT:-8080}";
const NAMESPACE = "alice"; // the walk-through's

async function firstCall() {
  const r = await fetch("first-call.sh");
  if (!r.ok) throw new Error(`The panel could not load its first-call.sh (HTTP ${r.status}).`);
  return (await r.text()).replace(README_ADDRESS, location.origin);
}

// What stands between this key and seeing the walk-through's memories here, if anything.
function keyNotes(who) {
  const notes = [];
  if (who.role === "reader") {
    notes.push(`This key (${who.name}) has the reader role: it reads but cannot observe. `
      + "The call uses the admin key; any key with the writer role will do.");
  }
  if (who.namespaces && !who.namespaces.includes(NAMESPACE)) {
    notes.push(`This key sees only ${who.namespaces.join(", ")}: to see the call's memories here, `
      + `put one of these in place of ${NAMESPACE} in B=… and this key in KEY=….`);
  }
  return notes.map((text) => h("p", { class: "hint key-note" }, text));
}

function copyButton(text, said) {
  // the Clipboard API exists only in a secure context (https, or this machine's loopback)
  if (!navigator.clipboard) return null;
  return h("button", { type: "button", class: "plain", id: "copy-first-call", onclick: async () => {
    try {
      await navigator.clipboard.writeText(text);
      said.textContent = "Copied: paste it into a terminal.";
    } catch {
      said.textContent = "The browser refused to copy; select the text instead.";
    }
  } }, "Copy");
}

export async function firstRun(who, watchSeconds) {
  const text = await firstCall();
  const said = h("span", { class: "notice", role: "status" });
  const scoped = Boolean(who.namespaces);
  return h("section", { id: "first-run" },
    h("h1", {}, "Welcome to Hindsight: nothing is stored yet"),
    h("p", {}, `No namespace ${scoped ? "this key may use " : ""}holds a memory, a session or a recall yet. `,
      "A namespace is one agent, user or tenant; it appears here with the first thing stored in it."),
    h("h2", {}, "Make the first call"),
    h("p", {}, "The README's walk-through starts with this call, here with this service's address. ",
      "Paste it into a terminal on the machine the service runs on (it uses curl and jq): ",
      "KEY is the admin key the service saved on its first start, and the lines starting with ",
      h("code", {}, "#>"), " are what it prints."),
    ...keyNotes(who),
    h("div", { class: "card first-call" },
      h("pre", { id: "first-call" }, text),
      h("div", { class: "row" }, copyButton(text, said), said)),
    h("p", { class: "muted", id: "first-run-watch" },
      `This page is watching: it turns into the list of namespaces as soon as anything is `
      + `stored (it looks every ${watchSeconds} s).`),
    h("h2", {}, "Then"),
    h("ul", { id: "next-steps" },
      h("li", {}, h("strong", {}, "Memories"), `: open ${NAMESPACE} to see each memory's confidence, `
        + "how often it was observed and recalled, and its history."),
      h("li", {}, h("strong", {}, "Recall"), ": ask \"favorite color\"; each result shows every factor "
        + "of its score, and the Recall log keeps what each recall returned."),
      h("li", {}, h("strong", {}, "The rest of the walk-through"), " (README, or docs/quickstart.md): "
        + "the same claim again raises its confidence, a new value supersedes the old one, and a "
        + "session's steps are working memory (the Sessions page)."),
      h("li", {}, h("strong", {}, "An agent"), ": the REST reference is at ",
        h("a", { href: "/docs" }, "/docs"), `; MCP clients connect to ${location.origin}/mcp; `,
        "the Python SDK is hindsight.client.")));
}
