// The review queue: quarantined memories (never recalled) a curator approves or rejects.

import { call, ns as base } from "../api.js";
import { code, empty, h, link, num, params, when } from "../dom.js";
import { may, refusal } from "../roles.js";

const LIMIT = 50;

// why it waits: the reason of its latest `quarantined` history entry
function reasonOf(history) {
  const entry = [...history].reverse().find((e) => e.change === "quarantined");
  return (entry && entry.reason) || "—";
}

function reviewButton(role, action, text, cls, onclick) {
  const why = refusal(role, action);
  return h("button", { type: "button", class: cls, "data-action": action, disabled: Boolean(why), title: why, onclick }, text);
}

function nothingWaits(ns) {
  return empty("queue-empty", "Nothing waits for review.",
    ["A claim waits here, never recalled, when its source's trust is under the policy's ",
      code("trust.quarantine_below"), " (by default: source ", code("web"),
      "), when it contends with a verified or permanent memory (from a less trusted source, or from ",
      "a writer), or when it carries ",
      "prompt-injection markers. Observing one, such as ",
      code(`{"key": "user.employer", "value": "works at Initech", "source": "web"}`),
      ` in ${ns}, puts it here.`]);
}

export async function render(ctx, said = "") {
  const { main, showError, who } = ctx;
  const p = params();
  const ns = ctx.currentNamespace(p);
  if (!ns) {
    main.replaceChildren(h("h1", {}, "Review"),
      h("p", {}, "Pick a namespace first on the ", h("a", { href: "#/namespaces" }, "Namespaces"), " page."));
    return;
  }
  const page = await call("GET", `${base(ns)}/memories`, undefined, { status: "quarantined", limit: LIMIT });
  const histories = await Promise.all(page.memories.map((m) =>
    call("GET", `${base(ns)}/memories/${encodeURIComponent(m.id)}/history`).catch(() => ({ history: [] }))));

  async function decide(m, verb, done) {
    try {
      await call("POST", `${base(ns)}/memories/${encodeURIComponent(m.id)}:${verb}`, {});
      showError(null);
      await render(ctx, done);
    } catch (err) {
      showError(err);
      // someone else may have reviewed it already: show the queue as it is now
      try { await render(ctx); } catch { /* the error above says enough */ }
    }
  }

  const cards = page.memories.map((m, i) => h("article", { class: "card review", "data-id": m.id, "data-key": m.key },
    h("h2", {}, link("memory", { ns, id: m.id }, m.key)),
    h("div", { class: "value" }, m.value),
    h("dl", { class: "facts" }, [
      ["why", h("span", { class: "reason" }, reasonOf(histories[i].history))],
      ["source", m.source || "—"],
      ["confidence", num(m.confidence, 2)],
      ["observed", `${m.observation_count}×, last ${when(m.last_observed)}`],
    ].flatMap(([k, v]) => [h("dt", {}, k), h("dd", {}, v)])),
    h("div", { class: "row actions" },
      reviewButton(who.role, "approve", "Approve", "", () =>
        decide(m, "approve", `Approved "${m.key}": it is now the active memory of its key.`)),
      reviewButton(who.role, "reject", "Reject", "danger", () => {
        if (!confirm(`Reject "${m.key}"? Its value is erased; only a tombstone stays in its history.`)) return;
        decide(m, "reject", `Rejected "${m.key}": its value is erased.`);
      }))));

  main.replaceChildren(...[
    h("h1", {}, `Review in ${ns}`),
    h("p", { class: "muted" }, "Quarantined memories are never recalled until a curator approves them. Approving makes a claim the active memory of its key; rejecting erases it."),
    may(who.role, "approve") ? null
      : h("p", { class: "hint", id: "role-note" }, `This key has the ${who.role} role: approving and rejecting need the curator role.`),
    h("p", { class: "notice", role: "status" }, said),
    cards.length ? h("div", { id: "queue" }, cards) : nothingWaits(ns),
    page.next_cursor ? h("p", { class: "hint" }, `Showing the first ${LIMIT}; review these to see more.`) : null,
  ].filter(Boolean));
}
