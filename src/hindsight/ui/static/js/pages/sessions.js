import { call, ns as base } from "../api.js";
import { ago, code, empty, h, link, table } from "../dom.js";

export async function render({ main, currentNamespace }) {
  const ns = currentNamespace(Object.fromEntries(new URLSearchParams(location.hash.split("?")[1] || "")));
  if (!ns) {
    main.replaceChildren(h("h1", {}, "Sessions"), h("p", {}, "Pick a namespace on the ", h("a", { href: "#/namespaces" }, "Namespaces"), " page."));
    return;
  }
  const data = await call("GET", `${base(ns)}/sessions`, undefined, { limit: 200 });
  const rows = data.sessions.map((s) => h("tr", { "data-session": s.session_id },
    h("td", {}, link("session", { ns, id: s.session_id }, s.session_id)),
    h("td", {}, s.status),
    h("td", { class: "num" }, s.step_count),
    h("td", { class: "num" }, s.live_steps ?? "—"),
    h("td", { class: "hide-narrow" }, ago(s.updated_at)),
    h("td", {}, ago(s.expires_at))));
  main.replaceChildren(h("h1", {}, `Sessions in ${ns}`),
    data.sessions.length
      ? table(["session", "status", { label: "steps", cls: "num" }, { label: "live", cls: "num" },
        { label: "last write", cls: "hide-narrow" }, "expires"], rows)
      : empty("sessions-empty", `No sessions in ${ns} yet.`,
        ["A session is a task's working memory; it starts with its first step: ",
          code(`POST /v1/namespaces/${ns}/sessions/{session_id}/steps`), " with ",
          code(`{"content": "…"}`), ", the SDK's ", code("append_step()"), " or the MCP tool ",
          code("append_step"), ". It is listed until its steps have expired and maintenance has ",
          "purged them."]));
}
