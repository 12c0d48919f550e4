// `Hindsight`: one typed method per REST call, over fetch.

import type { components, paths } from "./schema.js";
import {
  type Call,
  type Method,
  type QueryValue,
  TRANSIENT_STATUSES,
  TransportError,
  backoffMs,
  idempotencyKey,
  result,
  permanent,
  retryable,
} from "./transport.js";

type S = components["schemas"];
export type MemoryIn = S["MemoryIn"];
export type MemoryOut = S["MemoryOut"];
export type MemoryPage = S["MemoryPage"];
export type MemoryPatch = S["MemoryPatch"];
export type ReviewIn = S["ReviewIn"];
export type Rejected = S["Rejected"];
export type ObserveResult = S["ObserveResult"];
export type RecallIn = S["RecallIn"];
export type RecallOut = S["RecallOut"];
export type RecallHit = S["RecallHit"];
export type RecallLogOut = S["RecallLogOut"];
export type TurnIn = S["TurnIn"];
export type HistoryEntry = S["HistoryEntry"];
export type ForgetIn = S["ForgetIn"];
export type ForgetOut = S["ForgetOut"];
export type ExtractIn = S["ExtractIn"];
export type ExtractOut = S["ExtractOut"];
export type StepIn = S["StepIn"];
export type StepOut = S["StepOut"];
export type ContextOut = S["ContextOut"];
export type SessionOut = S["SessionOut"];
export type SessionEnded = S["SessionEnded"];
export type SessionDeleted = S["SessionDeleted"];
export type JobOut = S["JobOut"];
export type Whoami = S["Whoami"];
export type Policy = S["Policy"];
export type FeedbackOut = S["FeedbackOut"];
export type EraseReceipt = S["EraseReceipt"];
export type NamespacesOut = S["NamespacesOut"];
export type NamespaceStats = S["NamespaceStats"];
export type RecallLogPage = S["RecallLogPage"];
export type SessionsOut = S["SessionsOut"];
export type SessionJobsOut = S["SessionJobsOut"];

type Query<P extends keyof paths, M extends "get"> = NonNullable<
  NonNullable<paths[P][M]>["parameters"]["query"]
>;
export type ListFilters = Omit<Query<"/v1/namespaces/{namespace}/memories", "get">, "limit" | "cursor">;
export type StepsQuery = Query<"/v1/namespaces/{namespace}/sessions/{session_id}/steps", "get">;
export type ContextQuery = Query<"/v1/namespaces/{namespace}/sessions/{session_id}/context", "get">;
export type RecallsQuery = Query<"/v1/namespaces/{namespace}/recalls", "get">;
export type StepFields = Omit<StepIn, "content">;

export interface HindsightOptions {
  /** Sent as `Authorization: Bearer <apiKey>`. */
  apiKey?: string;
  /** Per attempt (default 30 s). */
  timeoutMs?: number;
  /** Transient failures are retried this many times (default 3). */
  maxRetries?: number;
  /** A fetch of your own (default: the global one). */
  fetch?: typeof fetch;
}

type Params = Record<string, string | number>;

/** Fill `{name}` in a path template of the API (checked against the schema at compile time). */
function fill(template: keyof paths, params: Params): string {
  return template.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = params[name];
    if (value === undefined) throw new Error(`missing path parameter ${name}`);
    return encodeURIComponent(String(value));
  });
}

function call<T>(
  method: Method,
  template: keyof paths,
  params: Params,
  options: Omit<Call<T>, "method" | "path" | "parse" | "idempotent"> & {
    idempotent?: boolean;
    parse?: (body: unknown) => T;
  } = {},
): Call<T> {
  return {
    ...options,
    method,
    path: fill(template, params),
    idempotent: options.idempotent ?? false,
    parse: options.parse ?? ((body) => body as T),
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A Hindsight service over HTTP.
 *
 *     const hs = new Hindsight("http://127.0.0.1:8080", { apiKey: "hs_..." });
 *     await hs.observe("alice", { key: "user.favorite_color", value: "blue" });
 *     (await hs.recall("alice", "what colour does she like?", { k: 3 })).results[0]?.value;
 *
 * Transient failures (cannot connect, 429, 502, 503, 504) are retried with backoff up to
 * `maxRetries` times; anything else throws `APIError` with the server's message.
 */
export class Hindsight {
  readonly baseUrl: string;
  readonly #headers: Record<string, string>;
  readonly #timeoutMs: number;
  readonly #maxRetries: number;
  readonly #fetch: typeof fetch;

  constructor(baseUrl = "http://127.0.0.1:8080", options: HindsightOptions = {}) {
    this.baseUrl = baseUrl.replace(/\/+$/, "");
    this.#headers = options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {};
    this.#timeoutMs = options.timeoutMs ?? 30_000;
    this.#maxRetries = options.maxRetries ?? 3;
    this.#fetch = options.fetch ?? globalThis.fetch.bind(globalThis);
  }

  /** Send one call with the retry rules; exposed for calls this class does not wrap yet. */
  async run<T>(c: Call<T>): Promise<T> {
    const url = new URL(this.baseUrl + c.path);
    for (const [name, value] of Object.entries(c.query ?? {})) {
      appendQuery(url, name, value);
    }
    const headers: Record<string, string> = { ...this.#headers, ...c.headers };
    let body: string | undefined;
    if (c.body !== undefined) {
      headers["content-type"] = "application/json";
      body = JSON.stringify(c.body);
    }
    for (let attempt = 0; ; attempt++) {
      let response: Response | undefined;
      let error: unknown;
      try {
        response = await this.#fetch(url, {
          method: c.method,
          headers,
          body,
          signal: AbortSignal.timeout(this.#timeoutMs),
        });
      } catch (exc) {
        error = exc;
      }
      if (response && (!TRANSIENT_STATUSES.has(response.status) || (await permanent(response)))) {
        return result(c, response);
      }
      if (attempt >= this.#maxRetries || !retryable(c, response, error)) {
        if (response) return result(c, response);
        throw new TransportError(`${c.method} ${c.path}: ${describe(error)}`, { cause: error });
      }
      await response?.body?.cancel();
      await sleep(backoffMs(attempt, response));
    }
  }

  // --- long-term memory ---

  /** Store or reinforce one memory. */
  observe(namespace: string, memory: MemoryIn): Promise<ObserveResult> {
    return this.run(call("POST", "/v1/namespaces/{namespace}/memories", { namespace }, { body: memory }));
  }

  /** Store or reinforce each memory, in order. `dedup: false`: a new key is never merged
   * into a near-identical memory under another key. */
  observeMany(
    namespace: string,
    memories: MemoryIn[],
    options: { dedup?: boolean } = {},
  ): Promise<ObserveResult[]> {
    const body: S["BatchIn"] = { memories };
    if (options.dedup === false) body.dedup = false;
    return this.run(
      call("POST", "/v1/namespaces/{namespace}/memories:batch", { namespace }, {
        body,
        parse: (b) => (b as S["BatchOut"]).results,
      }),
    );
  }

  /**
   * The memories best matching `query`, and/or the conversation so far: `context`, its recent
   * turns `{ role, content }`, oldest first (`query`, if given, is then the latest turn).
   *
   *     await hs.recall("alice", null, { context: [
   *       { role: "user", content: "I adopted a beagle" },
   *       { role: "assistant", content: "What's its name?" },
   *     ] });
   */
  recall(
    namespace: string,
    query: string | null,
    options: Omit<RecallIn, "query"> = {},
  ): Promise<RecallOut> {
    const body: RecallIn = query === null ? { ...options } : { ...options, query };
    return this.run(
      call("POST", "/v1/namespaces/{namespace}/recall", { namespace }, {
        body,
        idempotent: true,
      }),
    );
  }

  /** The logged recall: query, filters, results with scores. */
  explain(namespace: string, recallId: string): Promise<RecallLogOut> {
    return this.run(
      call("GET", "/v1/namespaces/{namespace}/recalls/{recall_id}", { namespace, recall_id: recallId }, {
        idempotent: true,
      }),
    );
  }

  get(namespace: string, memoryId: string): Promise<MemoryOut> {
    return this.run(
      call("GET", "/v1/namespaces/{namespace}/memories/{memory_id}", { namespace, memory_id: memoryId }, {
        idempotent: true,
      }),
    );
  }

  listMemories(
    namespace: string,
    options: ListFilters & { limit?: number; cursor?: string | null } = {},
  ): Promise<MemoryPage> {
    return this.run(
      call("GET", "/v1/namespaces/{namespace}/memories", { namespace }, {
        query: options as Record<string, QueryValue>,
        idempotent: true,
      }),
    );
  }

  /** Every memory, following the cursor: each exactly once. */
  async *iterMemories(namespace: string, filters: ListFilters = {}, pageSize = 500): AsyncGenerator<MemoryOut> {
    let cursor: string | null = null;
    do {
      const page: MemoryPage = await this.listMemories(namespace, { ...filters, limit: pageSize, cursor });
      yield* page.memories;
      cursor = page.next_cursor;
    } while (cursor !== null);
  }

  update(namespace: string, memoryId: string, changes: MemoryPatch): Promise<MemoryOut> {
    return this.run(
      call("PATCH", "/v1/namespaces/{namespace}/memories/{memory_id}", { namespace, memory_id: memoryId }, {
        body: changes,
        idempotent: true,
      }),
    );
  }

  async delete(namespace: string, memoryId: string): Promise<void> {
    await this.run(
      call("DELETE", "/v1/namespaces/{namespace}/memories/{memory_id}", { namespace, memory_id: memoryId }),
    );
  }

  history(namespace: string, memoryId: string): Promise<HistoryEntry[]> {
    return this.run(
      call("GET", "/v1/namespaces/{namespace}/memories/{memory_id}/history", { namespace, memory_id: memoryId }, {
        idempotent: true,
        parse: (b) => (b as S["HistoryOut"]).history,
      }),
    );
  }

  /** The review queue: quarantined memories, waiting for a curator. */
  quarantined(namespace: string, options: { limit?: number; cursor?: string | null } = {}): Promise<MemoryPage> {
    return this.listMemories(namespace, { ...options, status: "quarantined" });
  }

  /** A curator's yes to a quarantined memory: it becomes the active memory of its key. */
  approve(namespace: string, memoryId: string, review: ReviewIn = {}): Promise<MemoryOut> {
    return this.run(
      call("POST", "/v1/namespaces/{namespace}/memories/{memory_id}:approve", { namespace, memory_id: memoryId }, {
        body: review,
      }),
    );
  }

  /** A curator's no to a quarantined memory: it is erased, its history ends `rejected`. */
  reject(namespace: string, memoryId: string, review: ReviewIn = {}): Promise<Rejected> {
    return this.run(
      call("POST", "/v1/namespaces/{namespace}/memories/{memory_id}:reject", { namespace, memory_id: memoryId }, {
        body: review,
      }),
    );
  }

  forget(namespace: string, policy: ForgetIn): Promise<ForgetOut> {
    return this.run(
      call("POST", "/v1/namespaces/{namespace}/memories:forget", { namespace }, {
        body: policy,
        idempotent: Boolean(policy.dry_run),
      }),
    );
  }

  /** The memories worth keeping from a conversation (needs an LLM on the server). */
  extract(namespace: string, request: ExtractIn): Promise<ExtractOut> {
    return this.run(
      call("POST", "/v1/namespaces/{namespace}/memories:extract", { namespace }, {
        body: request,
        idempotent: Boolean(request.dry_run),
      }),
    );
  }

  // --- working memory ---

  /** Append a step. Every append carries an idempotency key (one is made up if none is
   * given), so a retry after a timeout can never add the step twice. */
  appendStep(namespace: string, sessionId: string, content: string, fields: StepFields = {}): Promise<StepOut> {
    return this.run(
      call("POST", "/v1/namespaces/{namespace}/sessions/{session_id}/steps", { namespace, session_id: sessionId }, {
        body: { idempotency_key: idempotencyKey(), ...fields, content },
        idempotent: true,
      }),
    );
  }

  /** This SDK's name for `appendStep` before it took REST's and MCP's, kept for code using it. */
  append(namespace: string, sessionId: string, content: string, fields: StepFields = {}): Promise<StepOut> {
    return this.appendStep(namespace, sessionId, content, fields);
  }

  /** The newest `recent` live steps (below index `before`, if given), in step order. */
  steps(namespace: string, sessionId: string, query: StepsQuery = {}): Promise<StepOut[]> {
    return this.run(
      call("GET", "/v1/namespaces/{namespace}/sessions/{session_id}/steps", { namespace, session_id: sessionId }, {
        query,
        idempotent: true,
        parse: (b) => (b as S["StepsOut"]).steps,
      }),
    );
  }

  /** Remove and return the newest live step (APIError 404 when there is none). Not retried
   * once sent: a repeat would remove a second step. */
  popStep(namespace: string, sessionId: string): Promise<StepOut> {
    return this.run(
      call("DELETE", "/v1/namespaces/{namespace}/sessions/{session_id}/steps:last", {
        namespace,
        session_id: sessionId,
      }),
    );
  }

  /** Set (or clear, with null) the summary the context read uses for a step. */
  setStepSummary(namespace: string, sessionId: string, stepIndex: number, summary: string | null): Promise<StepOut> {
    return this.run(
      call(
        "PATCH",
        "/v1/namespaces/{namespace}/sessions/{session_id}/steps/{step_index}",
        { namespace, session_id: sessionId, step_index: stepIndex },
        { body: { summary }, idempotent: true },
      ),
    );
  }

  context(namespace: string, sessionId: string, query: ContextQuery = {}): Promise<ContextOut> {
    return this.run(
      call("GET", "/v1/namespaces/{namespace}/sessions/{session_id}/context", { namespace, session_id: sessionId }, {
        query,
        idempotent: true,
      }),
    );
  }

  session(namespace: string, sessionId: string): Promise<SessionOut> {
    return this.run(
      call("GET", "/v1/namespaces/{namespace}/sessions/{session_id}", { namespace, session_id: sessionId }, {
        idempotent: true,
      }),
    );
  }

  endSession(namespace: string, sessionId: string): Promise<SessionEnded> {
    return this.run(
      call("POST", "/v1/namespaces/{namespace}/sessions/{session_id}:end", { namespace, session_id: sessionId }, {
        idempotent: true,
      }),
    );
  }

  consolidate(namespace: string, sessionId: string): Promise<JobOut> {
    return this.run(
      call("POST", "/v1/namespaces/{namespace}/sessions/{session_id}:consolidate", {
        namespace,
        session_id: sessionId,
      }, { idempotent: true }),
    );
  }

  deleteSession(namespace: string, sessionId: string): Promise<SessionDeleted> {
    return this.run(
      call("DELETE", "/v1/namespaces/{namespace}/sessions/{session_id}", { namespace, session_id: sessionId }),
    );
  }

  job(namespace: string, jobId: string): Promise<JobOut> {
    return this.run(
      call("GET", "/v1/namespaces/{namespace}/jobs/{job_id}", { namespace, job_id: jobId }, { idempotent: true }),
    );
  }

  /** Poll a consolidation job until it succeeds or fails (or `timeoutMs` passes). */
  async waitForJob(namespace: string, jobId: string, timeoutMs = 120_000, pollMs = 500): Promise<JobOut> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const current = await this.job(namespace, jobId);
      if (current.status === "succeeded" || current.status === "failed" || Date.now() > deadline) {
        return current;
      }
      await sleep(pollMs);
    }
  }

  whoami(): Promise<Whoami> {
    return this.run(call("GET", "/v1/whoami", {}, { idempotent: true }));
  }

  // --- feedback, policy, operators' reads ---

  /**
   * Which of a recall's results the agent used; each (recall, memory) verdict counts once,
   * on the memory (used_count, unused_count) and with the recall, for curators and audits.
   * Ranking does not read these counts.
   */
  feedback(
    namespace: string,
    recallId: string,
    verdicts: { used?: string[]; unused?: string[] },
  ): Promise<FeedbackOut> {
    return this.run(
      call("POST", "/v1/namespaces/{namespace}/recalls/{recall_id}/feedback", {
        namespace,
        recall_id: recallId,
      }, { body: { used: verdicts.used ?? [], unused: verdicts.unused ?? [] }, idempotent: true }),
    );
  }

  policy(namespace: string): Promise<Policy> {
    return this.run(call("GET", "/v1/namespaces/{namespace}/policy", { namespace }, { idempotent: true }));
  }

  /** Replace the namespace's own policy fields (those not sent take the defaults). */
  setPolicy(namespace: string, policy: Policy): Promise<Policy> {
    return this.run(
      call("PUT", "/v1/namespaces/{namespace}/policy", { namespace }, { body: policy, idempotent: true }),
    );
  }

  namespaces(): Promise<NamespacesOut> {
    return this.run(call("GET", "/v1/namespaces", {}, { idempotent: true }));
  }

  stats(namespace: string): Promise<NamespaceStats> {
    return this.run(call("GET", "/v1/namespaces/{namespace}/stats", { namespace }, { idempotent: true }));
  }

  /** Recent recalls, newest first; `key` finds those that returned that memory key. */
  recalls(namespace: string, query: RecallsQuery = {}): Promise<RecallLogPage> {
    return this.run(
      call("GET", "/v1/namespaces/{namespace}/recalls", { namespace }, {
        query: query as Record<string, QueryValue>,
        idempotent: true,
      }),
    );
  }

  sessions(namespace: string, limit?: number): Promise<SessionsOut> {
    return this.run(
      call("GET", "/v1/namespaces/{namespace}/sessions", { namespace }, { query: { limit }, idempotent: true }),
    );
  }

  sessionJobs(namespace: string, sessionId: string): Promise<SessionJobsOut> {
    return this.run(
      call("GET", "/v1/namespaces/{namespace}/sessions/{session_id}/jobs", { namespace, session_id: sessionId }, {
        idempotent: true,
      }),
    );
  }

  /** Admin: the namespace as parsed JSON lines (header, memories, sessions, end). */
  exportNamespace(namespace: string, options: { sessions?: boolean } = {}): Promise<unknown[]> {
    return this.run(
      call("GET", "/v1/namespaces/{namespace}:export", { namespace }, {
        query: { sessions: options.sessions ?? false },
        idempotent: true,
        text: true,
        parse: (body) =>
          String(body)
            .split("\n")
            .filter((line) => line.trim())
            .map((line) => JSON.parse(line) as unknown),
      }),
    );
  }

  /** Admin: erase every row and Redis key of the namespace; the receipt counts them. */
  eraseNamespace(namespace: string): Promise<EraseReceipt> {
    return this.run(call("DELETE", "/v1/namespaces/{namespace}", { namespace }));
  }
}

function appendQuery(url: URL, name: string, value: QueryValue): void {
  if (value === undefined || value === null) return;
  if (Array.isArray(value)) {
    for (const item of value) url.searchParams.append(name, String(item));
  } else {
    url.searchParams.append(name, String(value));
  }
}

function describe(error: unknown): string {
  if (error instanceof Error) {
    const cause = (error as { cause?: unknown }).cause;
    return cause instanceof Error ? `${error.message} (${cause.message})` : error.message;
  }
  return String(error);
}
