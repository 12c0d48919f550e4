// Small DOM helpers. Text always goes in as text (never as HTML): memory values are data.

export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else if (k === "class") el.className = v;
    else if (v === true) el.setAttribute(k, "");
    else el.setAttribute(k, String(v));
  }
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

export function when(iso) {
  if (!iso) return "—";
  const d = new Date(iso);
  return d.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "medium" });
}

export function ago(iso) {
  if (!iso) return "—";
  const s = (Date.now() - new Date(iso).getTime()) / 1000;
  const f = (n, u) => `${Math.round(n)} ${u}${Math.round(n) === 1 ? "" : "s"}`;
  const span = Math.abs(s);
  const text = span < 60 ? f(span, "second") : span < 3600 ? f(span / 60, "minute")
    : span < 86400 ? f(span / 3600, "hour") : f(span / 86400, "day");
  return s >= 0 ? `${text} ago` : `in ${text}`;
}

export const num = (x, digits = 3) => (x === null || x === undefined ? "—" : Number(x).toFixed(digits));

export function table(headers, rows) {
  return h("div", { class: "scroll" },
    h("table", {},
      h("thead", {}, h("tr", {}, headers.map((c) => h("th", { class: c.cls }, c.label ?? c)))),
      h("tbody", {}, rows)));
}

export function field(label, input) {
  return h("label", {}, label, input);
}

export function select(name, options, value) {
  return h("select", { name }, options.map(([v, text]) =>
    h("option", { value: v, selected: v === value }, text)));
}

export function params() {
  const q = location.hash.split("?")[1] || "";
  return Object.fromEntries(new URLSearchParams(q));
}

export function link(page, args, text) {
  const q = new URLSearchParams(Object.entries(args).filter(([, v]) => v !== undefined && v !== ""));
  return h("a", { href: `#/${page}?${q}` }, text);
}

// A list's empty state: why the list is empty (first line), then how to fill it. Each part
// is text or nodes; a blank table says neither.
export function empty(id, why, ...how) {
  return h("div", { class: "card empty", id },
    h("p", { class: "why" }, why),
    how.filter(Boolean).map((part) => h("p", {}, part)));
}

export const code = (text) => h("code", {}, text);
