// A recall score's components as a small bar chart: what relevance is made of, then each
// multiplicative factor of the score. A factor the API adds later shows without a change
// here: any numeric component named *_factor, *_weight, *_boost or *_discount is one.

import { h, num } from "./dom.js";

const INPUTS = ["similarity", "keyword"]; // fused into relevance
const KNOWN = ["relevance", "confidence", "access_boost", "tier_weight", "recency_factor",
  "importance_factor", "hop_discount"];
const FACTOR = /_(factor|weight|boost|discount)$/;

const label = (name) => name.replaceAll("_", " ");
const isNum = (v) => typeof v === "number" && Number.isFinite(v);

// What a factor is computed from, shown beside its bar.
const BASIS = {
  access_boost: (c) => (isNum(c.access_count) ? `recalled ${c.access_count}×` : "")
    + (isNum(c.access_boost_max) ? `, at most ${num(c.access_boost_max, 2)}` : ""),
  tier_weight: (c) => (c.status ? `tier ${c.status}` : ""),
  recency_factor: (c) => (isNum(c.recency) ? `recency ${num(c.recency, 3)}` : ""),
  importance_factor: (c) => (isNum(c.importance) ? `importance ${num(c.importance, 2)}` : ""),
  hop_discount: () => "second hop",
  time_factor: (c) => (c.time ? `occurred ${String(c.time).slice(0, 10)}` : ""),
};

export function factorNames(c) {
  const extra = Object.keys(c).filter((k) => FACTOR.test(k) && !KNOWN.includes(k)).sort();
  return [...KNOWN, ...extra].filter((k) => isNum(c[k]));
}

// "score = relevance × confidence × …" for the factors any of these results carry.
export function formula(results) {
  const names = [];
  for (const r of results) {
    for (const n of factorNames(r.components || {})) if (!names.includes(n)) names.push(n);
  }
  if (!names.length) return "";
  const hop = names.includes("hop_discount")
    ? " A second-hop hit scores hop discount × the lesser of its own score and that of the hit it followed."
    : "";
  return `score = ${names.filter((n) => n !== "hop_discount").map(label).join(" × ")}.${hop}`;
}

// Set through the CSSOM: the panel's Content-Security-Policy refuses style attributes.
function filled(width) {
  const span = h("span");
  span.style.width = `${width}%`;
  return span;
}

function bar(name, v, scale, note, kind) {
  const width = Math.max(0, Math.min(1, v / scale)) * 100;
  return [
    h("span", {}, label(name)),
    h("div", { class: `bar ${kind} ${name}`, title: `${label(name)} ${v}` }, filled(width)),
    h("span", { class: "num", "data-component": name }, num(v, 3)),
    h("span", { class: "note muted" }, note || ""),
  ];
}

export function bars(c) {
  const rows = [h("div", { class: "bars-head muted" }, "relevance is fused from")];
  for (const name of INPUTS) if (isNum(c[name])) rows.push(...bar(name, c[name], 1, "", "input"));
  rows.push(h("div", { class: "bars-head muted" }, "the score multiplies"));
  for (const name of factorNames(c)) {
    const v = c[name];
    // factors above 1 (the access boost) are drawn against their ceiling
    const ceiling = isNum(c[`${name}_max`]) ? c[`${name}_max`] : 1;
    rows.push(...bar(name, v, Math.max(1, v, ceiling), BASIS[name] ? BASIS[name](c) : "", "factor"));
  }
  return h("div", { class: "bars" }, rows);
}
