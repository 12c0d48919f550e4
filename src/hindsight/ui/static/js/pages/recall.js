import { call, ns as base } from "../api.js";
import { code, empty, field, h, link, num, params, select } from "../dom.js";
import { bars, formula } from "../score.js";

const TYPES = ["fact", "preference", "experience", "reflection", "relation", "event", "summary"];
const list = (s) => s.split(",").map((t) => t.trim()).filter(Boolean);
const NUMBERS = ["min_confidence", "min_relevance", "keyword_weight", "hops"];
const TIMES = ["created_after", "created_before", "observed_after", "observed_before",
  "occurred_after", "occurred_before", "reference_time"];

// The RecallIn body from the form: only what was filled in, so the service's defaults apply.
function bodyOf(f) {
  const body = { query: f.query.value, k: Number(f.k.value) };
  const types = TYPES.filter((t) => f[`type-${t}`].checked);
  if (types.length) body.memory_types = types;
  for (const name of ["tags", "tags_any"]) if (list(f[name].value).length) body[name] = list(f[name].value);
  for (const name of NUMBERS) if (f[name].value) body[name] = Number(f[name].value);
  // datetime-local is the browser's local time; the API wants an instant with its zone
  for (const name of TIMES) if (f[name].value) body[name] = new Date(f[name].value).toISOString();
  if (f.fusion.value) body.fusion = f.fusion.value;
  return body;
}

function hit(r, i, byId, ns) {
  const c = r.components;
  const hop = c.hop === 2
    ? h("div", { class: "muted hop" }, "hop 2: found by following ",
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

// Why a recall returned nothing: no memory to search, or none passed the query's bar.
async function nothingMatched(ns) {
  const stats = await call("GET", `${base(ns)}/stats`);
  const live = (stats.memories.active || 0) + (stats.memories.cold || 0);
  if (!live) {
    return empty("recall-empty", `Nothing matched: ${ns} holds no active memories yet.`,
      ["Recall searches active (and cold) memories only. Store some first: ",
        code(`POST /v1/namespaces/${ns}/memories:batch`), ", the SDK's ", code("observe()"),
        " or the MCP tool ", code("observe"), "."]);
  }
  return empty("recall-empty", "Nothing matched.",
    [`None of the ${live.toLocaleString()} memories recall searches in ${ns} (its active and cold ones) `,
      "passed this recall's filters: types, tags, minimum confidence or relevance, times. Loosen them."]);
}

const num01 = (name) => h("input", { name, type: "number", min: 0, max: 1, step: "0.05", size: 5 });
const time = (name) => h("input", { name, type: "datetime-local", step: 1 });

function form(p, onsubmit) {
  return h("form", { class: "card", id: "recall-form", onsubmit },
    h("div", { class: "row" },
      field("query", h("input", { name: "query", required: true, size: 48, value: p.q || "" })),
      field("k", h("input", { name: "k", type: "number", min: 1, max: 100, value: 10, size: 4 })),
      h("button", { type: "submit" }, "Recall")),
    h("div", { class: "row" }, h("span", { class: "muted" }, "types:"),
      TYPES.map((t) => h("label", { class: "inline" }, h("input", { type: "checkbox", name: `type-${t}` }), t))),
    h("div", { class: "row" },
      field("tags (all of)", h("input", { name: "tags", size: 16, placeholder: "a, b" })),
      field("tags (any of)", h("input", { name: "tags_any", size: 16, placeholder: "a, b" })),
      field("min confidence", num01("min_confidence")),
      field("min relevance", num01("min_relevance")),
      field("keyword weight", num01("keyword_weight")),
      field("fusion", select("fusion", [["", "default"], ["linear", "linear"], ["rrf", "rrf"]], "")),
      field("hops", select("hops", [["", "default"], ["1", "1"], ["2", "2"]], ""))),
    h("div", { class: "row" },
      field("created after", time("created_after")), field("created before", time("created_before")),
      field("observed after", time("observed_after")), field("observed before", time("observed_before")),
      h("span", { class: "muted" }, "times are this browser's local time")),
    h("div", { class: "row" },
      field("occurred after", time("occurred_after")), field("occurred before", time("occurred_before")),
      field("asked at (reference time)", time("reference_time"))));
}

export async function render({ main, currentNamespace, showError }) {
  const p = params();
  const ns = currentNamespace(p);
  if (!ns) {
    main.replaceChildren(h("h1", {}, "Recall"), h("p", {}, "Pick a namespace on the ", h("a", { href: "#/namespaces" }, "Namespaces"), " page."));
    return;
  }
  const out = h("div", { class: "card", id: "results" }, h("p", { class: "muted" }, "Results appear here."));
  const submit = async (e) => {
    e.preventDefault();
    out.replaceChildren(h("p", { class: "muted" }, "Recalling…"));
    try {
      const r = await call("POST", `${base(ns)}/recall`, bodyOf(e.target.elements));
      showError(null);
      const byId = Object.fromEntries(r.results.map((x) => [x.id, x]));
      const none = r.results.length ? null : await nothingMatched(ns);
      // replaceChildren prints a null as the text "null": leave absent parts out
      out.replaceChildren(...[
        h("p", { class: "muted" }, `${r.results.length} result(s) · recall `, link("recalls", { ns, recall: r.recall_id }, r.recall_id),
          " · recalling counts as an access"),
        r.time_window ? h("p", { class: "muted", id: "time-window" },
          `"${r.time_window.expression}": ${r.time_window.start} to ${r.time_window.end}; `,
          "memories that occurred outside it score less (time factor)") : null,
        r.results.length ? h("p", { class: "muted", id: "formula" }, `Here: ${formula(r.results)}`) : null,
        ...(r.results.length ? r.results.map((x, i) => hit(x, i, byId, ns)) : [none]),
      ].filter((part) => part !== null));
    } catch (err) {
      showError(err);
      out.replaceChildren(h("p", { class: "muted" }, "No results: see the error above."));
    }
  };
  main.replaceChildren(h("h1", {}, `Recall in ${ns}`),
    h("p", { class: "muted" },
      "score = relevance × confidence × access boost × specificity factor × trust factor × tier weight × ",
      "recency factor × importance factor (× time factor when the query names a time); ",
      "relevance fuses similarity and keyword match. Trust and the lifecycle factors come from the namespace's policy ",
      "(a factor whose weight is 0 is 1 and changes nothing)."),
    form(p, submit), out);
}
