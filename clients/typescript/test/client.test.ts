// The TypeScript SDK against a live Hindsight service (HINDSIGHT_URL, HINDSIGHT_API_KEY),
// and its retry rules against small local HTTP servers that fail on purpose.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";

import { APIError, Hindsight, TransportError } from "../src/index.js";

const url = process.env.HINDSIGHT_URL;
const apiKey = process.env.HINDSIGHT_API_KEY;

describe("against a live service", { skip: url ? false : "HINDSIGHT_URL is not set" }, () => {
  const hs = new Hindsight(url, { apiKey });
  const ns = () => "ts-" + randomUUID().slice(0, 12);

  test("feedback, policy, stats, the recall log, export and erase", async () => {
    const n = ns();
    const { id } = await hs.observe(n, { key: "user.city", value: "Oslo" });
    const found = await hs.recall(n, "which city", { k: 1 });
    const verdict = await hs.feedback(n, found.recall_id, { used: [id!] });
    assert.equal(verdict.recorded, 1);
    const policy = await hs.policy(n);
    const again = await hs.setPolicy(n, policy);
    assert.deepEqual(again, policy);
    const stats = await hs.stats(n);
    assert.equal(stats.memories.active, 1);
    const log = await hs.recalls(n, { key: "user.city" });
    assert.equal(log.recalls[0]?.recall_id, found.recall_id);
    const lines = await hs.exportNamespace(n);
    assert.ok(lines.length >= 3, "a header, the memory and an end line");
    const receipt = await hs.eraseNamespace(n);
    assert.ok(receipt);
    await assert.rejects(hs.get(n, id!), (e: unknown) => e instanceof APIError && e.status === 404);
  });

  test("observe, reinforce, recall, explain and read back", async () => {
    const n = ns();
    const first = await hs.observe(n, { key: "user.city", value: "Oslo", tags: ["home"] });
    assert.equal(first.outcome, "created");
    assert.equal(first.confidence, 0.5);
    const batch = await hs.observeMany(n, [
      { key: "user.city", value: "Oslo" },
      { key: "user.pet", value: "a cat named Miso" },
    ]);
    assert.deepEqual(
      batch.map((r) => r.outcome),
      ["reinforced", "created"],
    );
    assert.equal(batch[0]?.confidence, 0.6);

    const found = await hs.recall(n, "which city does the user live in", { k: 2, tags: ["home"] });
    assert.equal(found.results[0]?.key, "user.city");
    assert.equal(found.results[0]?.components.confidence, 0.6);
    const log = await hs.explain(n, found.recall_id);
    assert.equal(log.query, "which city does the user live in");

    // the conversation so far, instead of or beside a query
    const talk = [
      { role: "user", content: "My cat keeps me up at night" },
      { role: "assistant", content: "Oh no! Is it a kitten?" },
    ];
    const heard = await hs.recall(n, null, { context: talk, k: 1 });
    assert.equal(heard.results[0]?.key, "user.pet");
    assert.deepEqual(
      heard.conversation?.turns.map((t) => t.weight),
      [0.9, 0.5],
    );
    assert.equal(heard.results[0]?.components.keyword_of, "memory");
    const asked = await hs.recall(n, "what is its name again?", { context: talk, k: 1 });
    assert.equal(asked.conversation?.turns.length, 3);
    assert.equal((await hs.recall(n, null, { context: talk, conversation: false })).conversation, null);

    const memory = await hs.get(n, first.id!);
    assert.equal(memory.value, "Oslo");
    assert.deepEqual(memory.tags, ["home"]);
    const updated = await hs.update(n, first.id!, { value: "Bergen" });
    assert.equal(updated.value, "Bergen");
    const history = await hs.history(n, first.id!);
    assert.deepEqual(
      history.map((h) => h.change),
      ["created", "reinforced", "updated"],
    );
  });

  test("list pages, iterate, forget, delete and errors with the server's message", async () => {
    const n = ns();
    await hs.observeMany(
      n,
      Array.from({ length: 5 }, (_, i) => ({ key: `k${i}`, value: `value number ${i}` })),
    );
    const page = await hs.listMemories(n, { limit: 2 });
    assert.equal(page.memories.length, 2);
    assert.ok(page.next_cursor);
    const keys: string[] = [];
    for await (const m of hs.iterMemories(n, {}, 2)) keys.push(m.key);
    assert.deepEqual(keys, ["k0", "k1", "k2", "k3", "k4"]);
    assert.deepEqual(
      (await hs.listMemories(n, { key_prefix: "k4" })).memories.map((m) => m.key),
      ["k4"],
    );

    const dry = await hs.forget(n, { max_confidence: 0.5, dry_run: true });
    assert.equal(dry.count, 5);
    const gone = page.memories[0]!;
    await hs.delete(n, gone.id);
    await assert.rejects(hs.get(n, gone.id), (e: unknown) => {
      assert.ok(e instanceof APIError);
      assert.equal(e.status, 404);
      assert.match(e.message, /no memory/);
      return true;
    });
    await assert.rejects(hs.recall(n, ""), (e: unknown) => e instanceof APIError && e.status === 422);
  });

  test("equal values under different keys stay apart with dedup off", async () => {
    const n = ns();
    const same = "prefers the aisle seat on long flights";
    const [a] = await hs.observeMany(n, [{ key: "a", value: same }]);
    const [b] = await hs.observeMany(n, [{ key: "b", value: same }], { dedup: false });
    assert.notEqual(a?.id, b?.id);
    assert.equal(b?.key, "b");
  });

  test("working memory: append, read, page back, pop, summarise, end, delete", async () => {
    const n = ns();
    const first = await hs.appendStep(n, "s1", "looked up trains", { role: "assistant" });
    assert.equal(first.step_index, 0);
    await hs.append(n, "s1", "booked the 07:42");
    await hs.append(n, "s1", "sent the ticket", { idempotency_key: "send-1" });
    const replay = await hs.append(n, "s1", "sent the ticket", { idempotency_key: "send-1" });
    assert.equal(replay.step_index, 2);
    assert.deepEqual(
      (await hs.steps(n, "s1", { recent: 10 })).map((s) => s.content),
      ["looked up trains", "booked the 07:42", "sent the ticket"],
    );
    assert.deepEqual(
      (await hs.steps(n, "s1", { recent: 1, before: 2 })).map((s) => s.step_index),
      [1],
    );
    const popped = await hs.popStep(n, "s1");
    assert.equal(popped.content, "sent the ticket");
    assert.equal((await hs.session(n, "s1")).step_count, 2);

    const summarised = await hs.setStepSummary(n, "s1", 0, "trains");
    assert.equal(summarised.summary, "trains");
    const ctx = await hs.context(n, "s1", { recent: 1, max_chars: 1000 });
    assert.deepEqual(
      ctx.earlier.map((e) => e.text),
      ["trains"],
    );

    const ended = await hs.endSession(n, "s1");
    assert.equal(ended.status, "ended");
    const job = await hs.waitForJob(n, ended.consolidation.job_id, 60_000, 100);
    assert.ok(["succeeded", "failed"].includes(job.status));
    assert.equal((await hs.job(n, job.job_id)).job_id, job.job_id);
    assert.equal((await hs.consolidate(n, "s1")).session_id, "s1");
    await assert.rejects(hs.append(n, "s1", "too late"), (e: unknown) => e instanceof APIError && e.status === 409);
    assert.equal((await hs.deleteSession(n, "s1")).deleted_steps, 2);
    await assert.rejects(hs.popStep(n, "s1"), (e: unknown) => e instanceof APIError && e.status === 404);
  });

  test("whoami, and a wrong key", async () => {
    const me = await hs.whoami();
    assert.equal(me.is_admin, true);
    const stranger = new Hindsight(url, { apiKey: "not-a-key" });
    await assert.rejects(stranger.whoami(), (e: unknown) => e instanceof APIError && e.status === 401);
  });
});

// --- retries ---------------------------------------------------------------------------

type Handler = (req: IncomingMessage, res: ServerResponse, count: number) => void;

async function serve(handler: Handler): Promise<{ url: string; count: () => number; close: () => Promise<void> }> {
  let count = 0;
  const server = createServer((req, res) => {
    count += 1;
    req.resume();
    req.on("end", () => handler(req, res, count));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    count: () => count,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(body));
}

const WHOAMI = { name: "k", namespaces: null, is_admin: false };
const OBSERVED = { id: randomUUID(), key: "k", outcome: "created", confidence: 0.5, observation_count: 1, memory_type: "fact" };

describe("retry rules", () => {
  const servers: Array<{ close: () => Promise<void> }> = [];
  after(async () => {
    for (const s of servers) await s.close();
  });
  async function fake(handler: Handler) {
    const s = await serve(handler);
    servers.push(s);
    return s;
  }

  test("429 and 503 are retried, honouring Retry-After", async () => {
    const s = await fake((_, res, n) =>
      n < 3 ? json(res, n === 1 ? 429 : 503, { error: { code: "busy", message: "later" } }, { "retry-after": "0" }) : json(res, 200, WHOAMI),
    );
    const hs = new Hindsight(s.url);
    assert.deepEqual(await hs.whoami(), WHOAMI);
    assert.equal(s.count(), 3);
  });

  test("a write is retried on 503 too: the server refused before acting", async () => {
    const s = await fake((_, res, n) =>
      n === 1 ? json(res, 503, { error: { code: "unavailable", message: "db" } }, { "retry-after": "0" }) : json(res, 201, OBSERVED),
    );
    assert.equal((await new Hindsight(s.url).observe("n", { key: "k", value: "v" })).outcome, "created");
    assert.equal(s.count(), 2);
  });

  test("a 503 not_configured is not retried: no wait makes it pass", async () => {
    const s = await fake((_, res) => json(res, 503, { error: { code: "not_configured", message: "set HINDSIGHT_LLM_MODEL" } }));
    await assert.rejects(new Hindsight(s.url).whoami(), (e: unknown) => e instanceof APIError && e.code === "not_configured");
    assert.equal(s.count(), 1);
  });

  test("other errors are not retried and carry the server's message", async () => {
    const s = await fake((_, res) => json(res, 422, { error: { code: "invalid", message: "key: too long", details: [1] } }));
    await assert.rejects(new Hindsight(s.url).observe("n", { key: "k", value: "v" }), (e: unknown) => {
      assert.ok(e instanceof APIError);
      assert.deepEqual([e.status, e.code, e.message, e.details], [422, "invalid", "key: too long", [1]]);
      return true;
    });
    assert.equal(s.count(), 1);
  });

  test("giving up after maxRetries answers the last error", async () => {
    const s = await fake((_, res) => json(res, 503, { error: { code: "unavailable", message: "down" } }, { "retry-after": "0" }));
    await assert.rejects(new Hindsight(s.url, { maxRetries: 2 }).whoami(), (e: unknown) => e instanceof APIError && e.status === 503);
    assert.equal(s.count(), 3);
  });

  test("a timeout after sending: reads and appends are retried, an observe is not", async () => {
    const s = await fake((req, res, n) => {
      if (n % 2 === 1) return; // never answers: the client times out
      if (req.url?.includes("/steps")) {
        json(res, 201, { session_id: "s", step_index: 0, role: "user", content: "c", summary: null, metadata: {}, created_at: "2026-01-01T00:00:00Z", expires_at: "2026-01-02T00:00:00Z" });
      } else json(res, 200, WHOAMI);
    });
    const hs = new Hindsight(s.url, { timeoutMs: 200 });
    assert.deepEqual(await hs.whoami(), WHOAMI);
    assert.equal(s.count(), 2);
    assert.equal((await hs.append("n", "s", "c")).step_index, 0);
    assert.equal(s.count(), 4);
    await assert.rejects(hs.observe("n", { key: "k", value: "v" }), (e: unknown) => e instanceof TransportError);
    assert.equal(s.count(), 5);
  });

  test("every append carries an idempotency key, the same on each retry", async () => {
    const keys: string[] = [];
    const server = createServer((req, res) => {
      let raw = "";
      req.on("data", (chunk) => (raw += chunk));
      req.on("end", () => {
        keys.push(JSON.parse(raw).idempotency_key);
        if (keys.length === 1) return json(res, 503, { error: { code: "x", message: "y" } }, { "retry-after": "0" });
        json(res, 201, { session_id: "s", step_index: 0, role: "user", content: "c", summary: null, metadata: {}, created_at: "2026-01-01T00:00:00Z", expires_at: "2026-01-02T00:00:00Z" });
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    servers.push({ close: () => new Promise((r) => server.close(() => r())) });
    const hs = new Hindsight(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    await hs.append("n", "s", "c");
    assert.equal(keys.length, 2);
    assert.match(keys[0]!, /^sdk-[a-z]{32}$/);
    assert.equal(keys[0], keys[1]);
  });

  test("cannot connect: retried, then a TransportError", async () => {
    const s = await serve(() => undefined);
    await s.close(); // nothing listens there now
    const started = Date.now();
    await assert.rejects(new Hindsight(s.url, { maxRetries: 1 }).observe("n", { key: "k", value: "v" }), (e: unknown) => {
      assert.ok(e instanceof TransportError);
      assert.match(e.message, /POST \/v1\/namespaces\/n\/memories/);
      return true;
    });
    assert.ok(Date.now() - started >= 100, "waited before the retry");
  });
});

before(() => {
  if (!url) console.log("# HINDSIGHT_URL is not set: only the retry rules run");
});
