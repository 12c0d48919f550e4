// Hindsight from TypeScript: observe a memory twice (confidence rises), recall it, and
// keep a session's steps. Build and run (Node 18+):
//
//   cd clients/typescript && npm ci && npm run build
//   HINDSIGHT_URL=http://127.0.0.1:8080 HINDSIGHT_API_KEY=hs_... \
//     node dist-examples/typescript_memory.mjs
import { Hindsight } from "hindsight-client";

const hs = new Hindsight(process.env.HINDSIGHT_URL ?? "http://127.0.0.1:8080", {
  apiKey: process.env.HINDSIGHT_API_KEY,
});
const ns = process.env.HINDSIGHT_NAMESPACE ?? "example-user";

for (let i = 0; i < 2; i++) {
  const r = await hs.observe(ns, {
    key: "user.favorite_color",
    value: "blue",
    memory_type: "preference",
  });
  console.log(`observed ${r.key}: ${r.outcome} (confidence ${r.confidence})`);
}

const best = (await hs.recall(ns, "what colour does the user like?", { k: 1 })).results[0];
if (best) {
  const c = best.components;
  const parts = [c.similarity, c.keyword, c.confidence, c.access_boost].every(Number.isFinite);
  console.log(
    `recalled: ${best.value} (score components: ${parts ? "similarity, keyword, confidence, access boost" : "?"})`,
  );
}

await hs.appendStep(ns, "trip-planning", "searched flights to Oslo", { role: "assistant" });
await hs.appendStep(ns, "trip-planning", "booked the 07:42", { role: "assistant" });
const steps = await hs.steps(ns, "trip-planning", { recent: 10 });
console.log(`steps of trip-planning: ${steps.map((s) => s.content).join(" | ")}`);
