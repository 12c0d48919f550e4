import { call, ns as base } from "../api.js";
import { field, h, link, num, params, select } from "../dom.js";

const TYPES = ["fact", "preference", "experience", "reflection", "relation"];
// every factor of the score that is a 0..1 share, and the access boost (≥ 1)
const BARS = ["similarity", "keyword", "relevance", "confidence", "access_boost", "hop_discount"];

export function bars(components) {
  const rows = [];
  for (const name of BARS) {
    const v = components[name];
    if (v === null || v === undefined) continue;
    // the access boost is 1 + α·ln(1 + n): drawn against 2 so small boosts still show
    const width = Math.max(0, Math.min(1, name === "access_boost" ? v / 2 : v)) * 100;
    rows.push(h("span", {}, name.replace("_", " ")),
      h("div", { class: `bar ${name}`, title: String(v) }, h("span", { style: `width:${width}%` })),
      h("span", { class: "num", "data-component": name }, num(v, 3)));
  }
  return h("div", { class: "bars" }, rows);
}

function hit(r, i, byId, ns) {
  const c = r.components;
  const hop = c.hop === 2
    ? h("div", { class: "muted" }, "hop 2: found by following ",
      byId[c.via] ? link("memory", { ns, id: c.via }, byId[c.via].key) : String(c.via))
    : null;
  return h("div", { class: "hit", "data-key": r.key },
    h("div", {}, h("strong", {}, `${i + 1}. `), link("memory", { ns, id: r.id }, r.key),
      h("span", { class: "muted" }, ` · score ${num(r.score, 4)} · ${r.memory_type}`)),
    h("div", { class: "value" }, r.value),
    h("div", { class: "muted" },
      `vector rank ${c.vector_rank ?? "—"} · keyword rank ${c.keyword_rank ?? "—"} · fusion ${c.fusion}`,
      ` · recalled ${c.access_count}× before`),
    hop,
    bars(c));
}

export async function render({ main, currentNamespace, showError }) {
  const p = params();
  const ns = currentNamespace(p);
  if (!ns) {
    main.replaceChildren(h("h1", {}, "Recall"), h("p", {}, "Pick a namespace on the ", h("a", { href: "#/namespaces" }, "Namespaces"), " page."));
    return;
  }
  const out = h("div", { class: "card", id: "results" }, h("p", { class: "muted" }, "Results appear here."));
  const form = h("form", { class: "card", onsubmit: async (e) => {
    e.preventDefault();
    const f = e.target.elements;
    const body = { query: f.query.value, k: Number(f.k.value) };
    const types = TYPES.filter((t) => f[`type-${t}`].checked);
    if (types.length) body.memory_types = types;
    const tags = f.tags.value.split(",").map((s) => s.trim()).filter(Boolean);
    if (tags.length) body.tags = tags;
    if (f.min_confidence.value) body.min_confidence = Number(f.min_confidence.value);
    if (f.min_relevance.value) body.min_relevance = Number(f.min_relevance.value);
    if (f.keyword_weight.value) body.keyword_weight = Number(f.keyword_weight.value);
    if (f.fusion.value) body.fusion = f.fusion.value;
    if (f.hops.value) body.hops = Number(f.hops.value);
    out.replaceChildren(h("p", { class: "muted" }, "Recalling…"));
    try {
      const r = await call("POST", `${base(ns)}/recall`, body);
      showError(null);
      const byId = Object.fromEntries(r.results.map((x) => [x.id, x]));
      out.replaceChildren(
        h("p", { class: "muted" }, `${r.results.length} result(s) · recall `, link("recalls", { ns, recall: r.recall_id }, r.recall_id),
          " · recalling counts as an access"),
        ...(r.results.length ? r.results.map((x, i) => hit(x, i, byId, ns)) : [h("p", {}, "Nothing matched.")]));
    } catch (err) {
      showError(err);
      out.replaceChildren(h("p", { class: "muted" }, "No results: see the error above."));
    }
  } },
  h("div", { class: "row" },
    field("query", h("input", { name: "query", required: true, size: 48, value: p.q || "" })),
    field("k", h("input", { name: "k", type: "number", min: 1, max: 100, value: 10, size: 4 })),
    h("button", { type: "submit" }, "Recall")),
  h("div", { class: "row" },
    TYPES.map((t) => h("label", { style: "flex-direction:row;gap:4px" }, h("input", { type: "checkbox", name: `type-${t}` }), t))),
  h("div", { class: "row" },
    field("tags (all of)", h("input", { name: "tags", size: 16 })),
    field("min confidence", h("input", { name: "min_confidence", type: "number", min: 0, max: 1, step: "0.05", size: 5 })),
    field("min relevance", h("input", { name: "min_relevance", type: "number", min: 0, max: 1, step: "0.05", size: 5 })),
    field("keyword weight", h("input", { name: "keyword_weight", type: "number", min: 0, max: 1, step: "0.05", size: 5 })),
    field("fusion", select("fusion", [["", "default"], ["linear", "linear"], ["rrf", "rrf"]], "")),
    field("hops", select("hops", [["", "default"], ["1", "1"], ["2", "2"]], ""))));
  main.replaceChildren(h("h1", {}, `Recall in ${ns}`),
    h("p", { class: "muted" }, "score = relevance × confidence × access boost; relevance fuses similarity and keyword match."),
    form, out);
}
