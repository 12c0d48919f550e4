import { call } from "../api.js";
import { h, link, table } from "../dom.js";
import { firstRun } from "./firstrun.js";

// While the first-run page shows, how often it looks for the first memory to arrive
const WATCH_MS = 3000;

export async function render({ main, who, showError }) {
  const started = performance.now();
  const data = await call("GET", "/v1/namespaces");
  if (data.namespaces.length) {
    list(main, data, started);
    return null;
  }
  // Nothing anywhere yet: show the first call to make, then the list once it has landed.
  main.replaceChildren(await firstRun(who, WATCH_MS / 1000));
  let timer = null;
  let stopped = false;
  const watch = async () => {
    try {
      const now = await call("GET", "/v1/namespaces");
      if (stopped) return;
      showError(null);
      if (now.namespaces.length) { list(main, now, performance.now()); return; }
    } catch (err) {
      if (stopped) return;
      showError(err);
      if (err.status === 401) return;
    }
    timer = setTimeout(watch, WATCH_MS);
  };
  timer = setTimeout(watch, WATCH_MS);
  return () => { stopped = true; clearTimeout(timer); };
}

function list(main, data, started) {
  const statuses = [...new Set(data.namespaces.flatMap((n) => Object.keys(n.memories)))].sort();
  if (!statuses.includes("active")) statuses.unshift("active");
  const open = h("form", { class: "row", onsubmit: (e) => {
    e.preventDefault();
    const v = e.target.elements.ns.value.trim();
    if (v) location.hash = `#/memories?ns=${encodeURIComponent(v)}`;
  } }, h("input", { name: "ns", placeholder: "namespace", "aria-label": "namespace" }),
  h("button", { type: "submit", class: "plain" }, "Open"));
  const rows = data.namespaces.map((n) => h("tr", {},
    h("td", {}, link("memories", { ns: n.namespace }, n.namespace)),
    statuses.map((s) => h("td", { class: "num" }, (n.memories[s] || 0).toLocaleString())),
    h("td", { class: "num" }, link("sessions", { ns: n.namespace }, n.open_sessions)),
    h("td", { class: "num" }, link("recalls", { ns: n.namespace }, n.recalls_last_hour)),
    h("td", { class: "num hide-narrow" }, n.recalls_last_day),
    h("td", { class: "num" }, capacityUse(n))));
  main.replaceChildren(
    h("h1", {}, "Namespaces"),
    open,
    table([{ label: "namespace" }, ...statuses.map((s) => ({ label: s, cls: "num" })),
      { label: "open sessions", cls: "num" }, { label: "recalls / hour", cls: "num" },
      { label: "recalls / day", cls: "num hide-narrow" }, { label: "capacity use", cls: "num" }], rows),
    h("p", { class: "muted", id: "loaded-in" }, `Loaded in ${Math.round(performance.now() - started)} ms.`));
}

// active memories as a share of the namespace's soft cap (its lifecycle policy)
function capacityUse(n) {
  const active = n.memories.active || 0;
  const share = n.capacity ? (100 * active) / n.capacity : 0;
  return `${share < 1 && active ? "<1" : Math.round(share)}% of ${n.capacity.toLocaleString()}`;
}
