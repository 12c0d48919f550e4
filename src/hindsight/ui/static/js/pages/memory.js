import { call, ns as base } from "../api.js";
import { field, h, num, params, when } from "../dom.js";
import { may, refusal } from "../roles.js";

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

// A button for `action`, disabled (its title says which role is needed) when the role can't.
function actionButton(role, action, text, cls, onclick) {
  const why = refusal(role, action);
  return h("button", { class: cls, "data-action": action, disabled: Boolean(why), title: why, onclick }, text);
}

function roleNote(who) {
  if (!may(who.role, "edit")) {
    return h("p", { class: "hint", id: "role-note" }, `This key (${who.name}) has the ${who.role} role: it can read this memory but not change it. Changes need the writer role.`);
  }
  if (!may(who.role, "verify")) {
    return h("p", { class: "hint", id: "role-note" }, `This key has the ${who.role} role: verifying, making permanent or raising confidence above the initial one need the curator role.`);
  }
  return null;
}

function editForm(m, role, notice, act) {
  const value = h("textarea", { name: "value" }, m.value);
  const conf = h("input", { name: "confidence", type: "number", min: 0, max: 1, step: "0.05", value: m.confidence });
  const why = refusal(role, "edit");
  return h("form", { class: "card", id: "edit", title: why, onsubmit: (e) => {
    e.preventDefault();
    const body = {};
    if (value.value !== m.value) body.value = value.value;
    if (Number(conf.value) !== Number(m.confidence)) body.confidence = Number(conf.value);
    if (!Object.keys(body).length) { notice.textContent = "Nothing changed."; return; }
    act("PATCH", body, "Saved.");
  } }, h("h2", {}, "Edit"),
  h("fieldset", { disabled: Boolean(why) },
    field("value", value),
    h("div", { class: "row" }, field("confidence", conf), h("button", { type: "submit", "data-action": "edit", title: why }, "Save"))),
  h("p", { class: "hint" }, "A new value is a new claim: its confidence starts over unless you set one here."));
}

function actions(m, role, ns, act) {
  const patch = (body, said) => () => act("PATCH", body, said);
  return h("div", { class: "row", id: "actions" },
    actionButton(role, "verify", m.verified ? "Unverify" : "Verify", "plain",
      patch({ verified: !m.verified }, m.verified ? "No longer verified." : "Verified.")),
    actionButton(role, "permanent", m.permanent ? "Not permanent" : "Make permanent", "plain",
      patch({ permanent: !m.permanent }, m.permanent ? "No longer permanent." : "Now permanent: never forgotten.")),
    m.status !== "archived"
      ? actionButton(role, "archive", "Archive", "plain", patch({ status: "archived" }, "Archived."))
      : null,
    m.status !== "active"
      ? actionButton(role, "restore", "Restore", "plain", patch({ status: "active" }, "Restored to active."))
      : null,
    actionButton(role, "delete", "Delete", "danger", () => {
      if (!confirm(`Delete memory "${m.key}"? Its history is kept.`)) return;
      act("DELETE", undefined, null, () => {
        location.hash = `#/memories?${new URLSearchParams({ ns, deleted: m.key })}`;
      });
    }));
}

export async function render(ctx, said = "") {
  const { main, showError, who } = ctx;
  const p = params();
  const ns = ctx.currentNamespace(p);
  const path = `${base(ns)}/memories/${encodeURIComponent(p.id || "")}`;
  const [m, hist] = await Promise.all([call("GET", path), call("GET", `${path}/history`)]);
  const notice = h("p", { class: "notice", role: "status" }, said);

  async function act(method, body, done, then) {
    try {
      await call(method, path, body);
      showError(null);
      if (then) then();
      else await render(ctx, done);
    } catch (err) { showError(err); }
  }

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
        actions(m, who.role, ns, act), roleNote(who), notice),
      h("div", {}, h("div", { class: "card" }, h("h2", {}, `History (${hist.history.length} change${hist.history.length === 1 ? "" : "s"})`), timeline(hist.history)),
        editForm(m, who.role, notice, act))));
}
