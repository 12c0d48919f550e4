import { call, ns as base } from "../api.js";
import { field, h, num, params, when } from "../dom.js";

function facts(pairs) {
  return h("dl", { class: "facts" }, pairs.flatMap(([k, v]) => [h("dt", {}, k), h("dd", {}, v)]));
}

function timeline(history) {
  return h("ol", { class: "timeline", id: "history" }, history.map((e) => h("li", {},
    h("div", {}, h("strong", {}, e.change), " · ", when(e.changed_at), e.actor ? ` · by ${e.actor}` : ""),
    e.value !== null ? h("div", { class: "value" }, e.value) : null,
    h("div", { class: "muted" }, `confidence ${num(e.confidence, 2)}`,
      e.observation_count ? ` · observed ${e.observation_count}×` : "",
      e.source ? ` · source ${e.source}` : ""))));
}

export async function render(ctx) {
  const { main, showError } = ctx;
  const p = params();
  const ns = ctx.currentNamespace(p);
  const path = `${base(ns)}/memories/${encodeURIComponent(p.id || "")}`;
  const [m, hist] = await Promise.all([call("GET", path), call("GET", `${path}/history`)]);
  const notice = h("p", { class: "notice", role: "status" });

  async function act(method, body, done) {
    try {
      const r = await call(method, path, body);
      showError(null);
      if (done) done(r);
      else await render(ctx);
    } catch (err) { showError(err); }
  }

  const value = h("textarea", { name: "value" }, m.value);
  const conf = h("input", { name: "confidence", type: "number", min: 0, max: 1, step: "0.05", value: m.confidence });
  const edit = h("form", { class: "card", onsubmit: (e) => {
    e.preventDefault();
    const body = {};
    if (value.value !== m.value) body.value = value.value;
    if (Number(conf.value) !== Number(m.confidence)) body.confidence = Number(conf.value);
    if (!Object.keys(body).length) { notice.textContent = "Nothing changed."; return; }
    act("PATCH", body);
  } }, h("h2", {}, "Edit"), field("value", value),
  h("div", { class: "row" }, field("confidence", conf), h("button", { type: "submit" }, "Save")));

  const buttons = h("div", { class: "row" },
    m.verified ? null : h("button", { class: "plain", onclick: () => act("PATCH", { verified: true }) }, "Verify"),
    m.status === "active"
      ? h("button", { class: "plain", onclick: () => act("PATCH", { status: "archived" }) }, "Archive")
      : h("button", { class: "plain", onclick: () => act("PATCH", { status: "active" }) }, "Restore"),
    h("button", { class: "danger", onclick: () => {
      if (!confirm(`Delete memory "${m.key}"? Its history is kept.`)) return;
      act("DELETE", undefined, () => { location.hash = `#/memories?ns=${encodeURIComponent(ns)}`; });
    } }, "Delete"));

  main.replaceChildren(
    h("p", {}, h("a", { href: `#/memories?ns=${encodeURIComponent(ns)}` }, `← Memories in ${ns}`)),
    h("h1", { id: "memory-key" }, m.key),
    h("div", { class: "grid2" },
      h("div", { class: "card" },
        h("div", { class: "value", id: "memory-value" }, m.value),
        h("hr"),
        facts([
          ["type", m.memory_type], ["status", m.status],
          ["confidence", num(m.confidence, 2)], ["importance", num(m.importance, 2)],
          ["observed", `${m.observation_count}×, last ${when(m.last_observed)}`],
          ["recalled", `${m.access_count}×${m.last_accessed ? `, last ${when(m.last_accessed)}` : ""}`],
          ["source", m.source || "—"], ["verified", m.verified ? "yes" : "no"],
          ["permanent", m.permanent ? "yes" : "no"],
          ["tags", m.tags.length ? m.tags.map((t) => h("span", { class: "tag" }, t)) : "—"],
          ["created", when(m.created_at)], ["updated", when(m.updated_at)],
          ["metadata", Object.keys(m.metadata).length ? h("pre", {}, JSON.stringify(m.metadata, null, 2)) : "—"],
          ["id", m.id],
        ]),
        buttons, notice),
      h("div", {}, h("div", { class: "card" }, h("h2", {}, `History (${hist.history.length} changes)`), timeline(hist.history)), edit)));
}
