// The panel's shell: sign-in, navigation, one page at a time, errors in plain words.

import { call, forget, key, setKey } from "./api.js";
import { h } from "./dom.js";
import * as memories from "./pages/memories.js";
import * as memory from "./pages/memory.js";
import * as namespaces from "./pages/namespaces.js";
import * as recall from "./pages/recall.js";
import * as recalls from "./pages/recalls.js";
import * as review from "./pages/review.js";
import * as sessions from "./pages/sessions.js";
import * as session from "./pages/session.js";

const PAGES = { namespaces, memories, memory, review, recall, recalls, sessions, session };
const main = document.getElementById("main");
const errorBox = document.getElementById("error");
let stopPage = null;
// Each route() is one navigation; a page may only draw while its navigation is the latest.
// A slow page (the namespace list, counting every memory) otherwise finished after the page
// the user had gone on to, and replaced it.
let generation = 0;

export function showError(err) {
  if (!err) { errorBox.hidden = true; errorBox.textContent = ""; return; }
  errorBox.textContent = err.message || String(err);
  errorBox.hidden = false;
  if (err.status === 401) signOut(false);
}

function signOut(clearError = true) {
  forget();
  if (clearError) showError(null);
  route();
}

function signIn() {
  document.getElementById("nav").hidden = true;
  document.getElementById("who").replaceChildren();
  const input = h("input", { type: "password", name: "apikey", autocomplete: "off", size: 40,
    placeholder: "hs_…", "aria-label": "API key" });
  const form = h("form", { class: "card", id: "signin", onsubmit: async (e) => {
    e.preventDefault();
    setKey(input.value.trim());
    try {
      await call("GET", "/v1/whoami");
      showError(null);
      if (!location.hash || location.hash === "#/") location.hash = "#/namespaces";
      else route();
    } catch (err) {
      forget();
      showError(err);
    }
  } },
  h("h1", {}, "Sign in"),
  h("p", { class: "muted" }, "Paste an API key. It stays in this browser tab only (sessionStorage) and is sent as a Bearer header with each call."),
  h("div", { class: "row" }, input, h("button", { type: "submit" }, "Sign in")));
  main.replaceChildren(form);
  input.focus();
}

export function currentNamespace(p) {
  if (p.ns) sessionStorage.setItem("hindsight.ns", p.ns);
  return p.ns || sessionStorage.getItem("hindsight.ns") || "";
}

async function route() {
  const mine = ++generation;
  if (stopPage) { stopPage(); stopPage = null; }
  if (!key()) { signIn(); return; }
  const name = (location.hash.slice(2).split("?")[0] || "namespaces");
  const page = PAGES[name] || namespaces;
  document.getElementById("nav").hidden = false;
  for (const a of document.querySelectorAll("nav a")) {
    a.classList.toggle("active", a.dataset.page === name || (name === "memory" && a.dataset.page === "memories")
      || (name === "session" && a.dataset.page === "sessions"));
  }
  try {
    const who = await call("GET", "/v1/whoami");
    if (mine !== generation) return;
    document.getElementById("who").replaceChildren(
      h("span", {}, `Signed in as ${who.name}`),
      h("button", { class: "plain", onclick: () => signOut() }, "Sign out"));
    showError(null);
    main.replaceChildren(h("p", { class: "muted" }, "Loading…"));
    // Element.replaceChildren prints a null as the text "null": pages leave out absent parts
    // as null, and this drops them
    const view = { replaceChildren: (...nodes) => {
      if (mine === generation) main.replaceChildren(...nodes.filter((n) => n !== null && n !== undefined && n !== false));
    } };
    const ctx = { main: view, who, showError, currentNamespace };
    const stop = (await page.render(ctx)) || null;
    if (mine === generation) stopPage = stop;
    else if (stop) stop();
  } catch (err) {
    if (mine !== generation) return;
    showError(err);
    if (err.status !== 401) main.replaceChildren();
  }
}

window.addEventListener("hashchange", route);
route();
