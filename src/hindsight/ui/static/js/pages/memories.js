import { call, ns as base } from "../api.js";
import { ago, code, empty, field, h, link, num, params, select, table } from "../dom.js";

const TYPES = ["", "fact", "preference", "experience", "reflection", "relation", "event", "summary"];

function noNamespace(main) {
  main.replaceChildren(h("h1", {}, "Memories"),
    h("p", {}, "Pick a namespace first on the ", h("a", { href: "#/namespaces" }, "Namespaces"), " page."));
}

// Why the list is empty: nothing stored yet, nothing with this status, or the filters.
async function nothingListed(ns, p) {
  const status = p.status || "active";
  const stats = await call("GET", `${base(ns)}/stats`);
  const counts = Object.entries(stats.memories).filter(([, n]) => n > 0);
  if (!counts.length) {
    return empty("memories-empty", `No memories in ${ns} yet.`,
      ["A memory is stored by observing a claim: ", code(`POST /v1/namespaces/${ns}/memories:batch`),
        " (the walk-through's first call), the SDK's ", code("observe()"), " or the MCP tool ",
        code("observe"), ". A session's steps become memories too, when the session ends and is consolidated."]);
  }
  const held = `${ns} holds ${counts.map(([s, n]) => `${n.toLocaleString()} ${s}`).join(", ")}`;
  const review = stats.memories.quarantined
    ? [" Quarantined ones wait on the ", link("review", { ns }, "Review"), " page."] : "";
  if (p.type || p.tag || p.prefix || p.min) {
    return empty("memories-empty",
      `No ${status === "all" ? "" : `${status} `}memory in ${ns} matches these filters.`,
      [`${held}. `, link("memories", { ns, status: p.status }, "Clear the filters"), " to list them.", review]);
  }
  return empty("memories-empty", `${ns} holds no ${status} memories.`,
    [`${held}: the status "all" lists every one.`, review]);
}

export async function render({ main, currentNamespace }) {
  const p = params();
  const ns = currentNamespace(p);
  if (!ns) return noNamespace(main);
  const query = {
    limit: 50, cursor: p.cursor, memory_type: p.type, tag: p.tag, key_prefix: p.prefix,
    min_confidence: p.min, status: p.status || "active",
  };
  const page = await call("GET", `${base(ns)}/memories`, undefined, query);
  const form = h("form", { class: "filters", onsubmit: (e) => {
    e.preventDefault();
    const f = e.target.elements;
    const q = new URLSearchParams({ ns });
    for (const [k, el] of [["type", f.type], ["tag", f.tag], ["prefix", f.prefix], ["min", f.min], ["status", f.status]]) {
      if (el.value) q.set(k, el.value);
    }
    location.hash = `#/memories?${q}`;
  } },
  field("type", select("type", TYPES.map((t) => [t, t || "any"]), p.type || "")),
  field("tag", h("input", { name: "tag", value: p.tag || "", size: 12 })),
  field("key prefix", h("input", { name: "prefix", value: p.prefix || "", size: 16 })),
  field("min confidence", h("input", { name: "min", type: "number", step: "0.05", min: 0, max: 1, value: p.min || "", size: 5 })),
  field("status", select("status", [["active", "active"], ["archived", "archived"], ["all", "all"]], p.status || "active")),
  h("button", { type: "submit" }, "Filter"));
  const rows = page.memories.map((m) => h("tr", { "data-id": m.id },
    h("td", {}, link("memory", { ns, id: m.id }, m.key)),
    h("td", { class: "clip", title: m.value }, m.value),
    h("td", { class: "hide-narrow" }, m.memory_type),
    h("td", { class: "num" }, num(m.confidence, 2)),
    h("td", { class: "num hide-narrow" }, m.observation_count),
    h("td", { class: "num hide-narrow" }, m.access_count),
    h("td", { class: "hide-narrow" }, m.status),
    h("td", { class: "hide-narrow" }, ago(m.updated_at))));
  const nextArgs = { ...p, ns, cursor: page.next_cursor };
  main.replaceChildren(
    h("h1", {}, `Memories in ${ns}`),
    p.deleted ? h("p", { class: "notice", role: "status" }, `Deleted "${p.deleted}"; its history is kept.`) : null,
    form,
    page.memories.length
      ? table(["key", "value", { label: "type", cls: "hide-narrow" }, { label: "confidence", cls: "num" },
        { label: "observed", cls: "num hide-narrow" }, { label: "recalled", cls: "num hide-narrow" },
        { label: "status", cls: "hide-narrow" }, { label: "updated", cls: "hide-narrow" }], rows)
      : await nothingListed(ns, p),
    h("div", { class: "row" },
      p.cursor ? h("a", { href: `#/memories?${new URLSearchParams({ ns })}` }, "First page") : null,
      page.next_cursor ? link("memories", nextArgs, "Next page →") : null));
}
