import { call, ns as base } from "../api.js";
import { ago, code, empty, h, params, when } from "../dom.js";

const REFRESH_MS = 2000;

function job(j) {
  const r = j.result || {};
  const observed = (r.observed || []).map((o) => h("li", {}, `${o.outcome || "observed"}: ${o.key}`, o.confidence !== undefined ? ` (confidence ${o.confidence})` : ""));
  const dropped = (r.dropped || []).map((d) => h("li", {}, `${d.key}: ${d.reason}`));
  return h("div", { class: "card job", "data-job": j.job_id },
    h("div", {}, h("strong", {}, j.status), ` · ${j.trigger} · ${j.method || "method not chosen yet"} · steps ${j.from_step ?? "?"}–${j.through_step ?? "?"} · attempt ${j.attempts}`),
    h("div", { class: "muted" }, `queued ${when(j.created_at)}${j.finished_at ? ` · finished ${when(j.finished_at)}` : ""}`),
    j.error ? h("p", { class: "error" }, j.error) : null,
    r.note ? h("p", { class: "muted" }, r.note) : null,
    observed.length ? [h("div", {}, "Observed:"), h("ul", {}, observed)] : null,
    dropped.length ? [h("div", {}, "Dropped:"), h("ul", {}, dropped)] : null,
    r.summaries_written !== undefined ? h("div", { class: "muted" }, `${r.summaries_written} summaries written`) : null);
}

function noLiveSteps(s) {
  if (!s.step_count) {
    return empty("steps-empty", "No steps yet.",
      ["A step is appended with ", code("POST …/steps"), " and shows here within seconds."]);
  }
  return empty("steps-empty",
    `None of its ${s.step_count} step${s.step_count === 1 ? " is" : "s is"} live any more.`,
    ["A step expires 24 h (by default) after the session's last write, or sooner by its ",
      code("ttl_seconds"), ", and is never returned after; what consolidation drew from it stays ",
      "in long-term memory."]);
}

function noJobs(ns, sid, s) {
  const path = `/v1/namespaces/${ns}/sessions/${sid}`;
  const consolidate = [code(`POST ${path}:consolidate`), " queues a job that turns the steps not yet ",
    "consolidated into long-term memories"];
  return empty("jobs-empty", "No consolidation jobs yet.",
    s.status === "active"
      ? ["Ending the session (", code(`POST ${path}:end`), ", the SDK's ", code("end_session()"),
        " or the MCP tool ", code("session_end"), ") queues one; ", consolidate, ", without ending it."]
      : [consolidate, "."]);
}

export async function render({ main, currentNamespace, showError }) {
  const p = params();
  const ns = currentNamespace(p);
  const sid = p.id || "";
  const path = `${base(ns)}/sessions/${encodeURIComponent(sid)}`;
  const head = h("div", { class: "card" });
  const steps = h("ol", { class: "steps", id: "steps", start: 0 });
  const stepsBox = h("div");
  const jobs = h("div", { id: "jobs" });
  const status = h("p", { class: "muted", role: "status" });
  let timer = null;
  let stopped = false;

  async function refresh() {
    try {
      const [s, st, js] = await Promise.all([
        call("GET", path), call("GET", `${path}/steps`, undefined, { recent: 200 }), call("GET", `${path}/jobs`)]);
      showError(null);
      head.replaceChildren(h("dl", { class: "facts" },
        h("dt", {}, "status"), h("dd", { id: "session-status" }, s.status),
        h("dt", {}, "steps"), h("dd", {}, `${s.step_count} written, ${s.live_steps ?? st.steps.length} live`),
        h("dt", {}, "expires"), h("dd", {}, `${when(s.expires_at)} (${ago(s.expires_at)})`),
        h("dt", {}, "last write"), h("dd", {}, s.updated_at ? ago(s.updated_at) : "—")));
      steps.replaceChildren(...st.steps.map((x) => h("li", { value: x.step_index, "data-step": x.step_index },
        h("strong", {}, x.role), " ", h("span", { class: "muted" }, when(x.created_at)),
        h("div", { class: "value" }, x.content),
        x.summary ? h("div", { class: "muted" }, `summary: ${x.summary}`) : null)));
      stepsBox.replaceChildren(st.steps.length ? steps : noLiveSteps(s));
      jobs.replaceChildren(...(js.jobs.length ? js.jobs.map(job) : [noJobs(ns, sid, s)]));
      const live = s.status === "active" || js.jobs.some((j) => j.status === "pending" || j.status === "running");
      status.textContent = live ? `Refreshing every ${REFRESH_MS / 1000} s while the session runs.` : "Session ended; not refreshing.";
      if (live && !stopped) timer = setTimeout(refresh, REFRESH_MS);
    } catch (err) {
      showError(err);
      if (!stopped && err.status !== 401 && err.status !== 404) timer = setTimeout(refresh, REFRESH_MS * 2);
    }
  }

  main.replaceChildren(
    h("p", {}, h("a", { href: `#/sessions?ns=${encodeURIComponent(ns)}` }, `← Sessions in ${ns}`)),
    h("h1", {}, `Session ${sid}`), status, head,
    h("div", { class: "grid2" },
      h("div", { class: "card" }, h("h2", {}, "Steps"), stepsBox),
      h("div", {}, h("h2", {}, "Consolidation jobs"), jobs)));
  await refresh();
  return () => { stopped = true; clearTimeout(timer); };
}
