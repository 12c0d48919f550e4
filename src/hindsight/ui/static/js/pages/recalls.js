import { call, ns as base } from "../api.js";
import { ago, code, empty, field, h, link, num, params, when } from "../dom.js";
import { bars } from "../score.js";

function entry(r, ns, open) {
  const results = h("div", { hidden: !open },
    r.results.map((x, i) => h("div", { class: "hit" },
      h("div", {}, `${i + 1}. `, link("memory", { ns, id: x.id }, x.key), h("span", { class: "muted" }, ` · score ${num(x.score, 4)}`)),
      h("div", { class: "value" }, x.value),
      x.components ? bars(x.components) : null)));
  const filters = Object.keys(r.filters || {}).length ? ` · filters ${JSON.stringify(r.filters)}` : "";
  return h("div", { class: "card recall", "data-recall": r.recall_id },
    h("div", {}, h("strong", {}, r.query)),
    h("div", { class: "muted" }, `${when(r.created_at)} (${ago(r.created_at)}) · by ${r.actor || "?"} · k=${r.k} · `,
      `${r.results.length} result(s) · ${num(r.duration_ms, 1)} ms${filters}`),
    h("button", { class: "plain", onclick: (e) => { results.hidden = !results.hidden; e.target.textContent = results.hidden ? "Show results" : "Hide results"; } },
      open ? "Hide results" : "Show results"),
    results);
}

function nothingLogged(ns, p) {
  if (p.key || p.actor || p.query) {
    return empty("recalls-empty", "No recalls match these filters.",
      [link("recalls", { ns }, "Clear the filters"), ` to see every recall of ${ns}.`]);
  }
  return empty("recalls-empty", `No recalls in ${ns} yet.`,
    ["Every recall is logged here with what it returned and each score's parts: ",
      code(`POST /v1/namespaces/${ns}/recall`), ", the SDK's ", code("recall()"), ", the MCP tool ",
      code("recall"), ", or the ", link("recall", { ns }, "Recall"), " page. The log keeps ",
      "recalls for 30 days unless HINDSIGHT_RECALL_LOG_RETENTION_DAYS says otherwise."]);
}

export async function render({ main, currentNamespace }) {
  const p = params();
  const ns = currentNamespace(p);
  if (!ns) {
    main.replaceChildren(h("h1", {}, "Recall log"), h("p", {}, "Pick a namespace on the ", h("a", { href: "#/namespaces" }, "Namespaces"), " page."));
    return;
  }
  let recalls;
  let next = null;
  if (p.recall) {
    recalls = [await call("GET", `${base(ns)}/recalls/${encodeURIComponent(p.recall)}`)];
  } else {
    const page = await call("GET", `${base(ns)}/recalls`, undefined, { limit: 25, cursor: p.cursor, key: p.key, actor: p.actor, query: p.query });
    recalls = page.recalls;
    next = page.next_cursor;
  }
  const form = h("form", { class: "filters", onsubmit: (e) => {
    e.preventDefault();
    const f = e.target.elements;
    const q = new URLSearchParams({ ns });
    for (const k of ["key", "actor", "query"]) if (f[k].value) q.set(k, f[k].value);
    location.hash = `#/recalls?${q}`;
  } },
  field("returned memory key", h("input", { name: "key", value: p.key || "", size: 20 })),
  field("API key name", h("input", { name: "actor", value: p.actor || "", size: 14 })),
  field("query contains", h("input", { name: "query", value: p.query || "", size: 20 })),
  h("button", { type: "submit" }, "Search"));
  main.replaceChildren(h("h1", {}, `Recall log of ${ns}`),
    h("p", { class: "muted" }, "Why did the agent say that? Each recall with what it returned and each score's parts."),
    form,
    ...(recalls.length ? recalls.map((r) => entry(r, ns, Boolean(p.recall))) : [nothingLogged(ns, p)]),
    next ? link("recalls", { ...p, ns, cursor: next }, "Older →") : null);
}
