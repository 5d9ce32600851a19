// Embedding tailswarm: one coordinator, three peers on the in-memory transport and a simulated clock.
import { Coordinator, LatencyBook, MemoryTransport, SimClock, quorumVote } from "tailswarm";

const clock = new SimClock();
const transport = new MemoryTransport(clock, { seed: 1 });
transport.addPeer("fast-1", { latency: 8, handler: () => ({ vote: "yes" }) });
transport.addPeer("fast-2", { latency: 12, handler: () => ({ vote: "yes" }) });
// One peer behind a congested gateway: usually 20 ms, one call in ten takes 400 ms.
transport.addPeer("gw", { latency: (rng) => (rng() < 0.1 ? 400 : 20), handler: () => ({ vote: "no" }) });

const book = new LatencyBook({ windowMs: 60_000, minSamples: 20 }, clock);
const coordinator = new Coordinator({ transport, book, clock });
const model = quorumVote({ prior: "no" });
const fanOut = (budgetMs: number, policy: "p99-boundary" | "always-sync" = "p99-boundary") =>
  clock.runUntilSettled(
    coordinator.fanOut(
      { kind: "vote", payload: { question: "deploy?" } },
      { peers: ["fast-1", "fast-2", "gw"], budgetMs, model, fallback: () => "no", policy },
    ),
  );

// learn the peers' latency: synchronous fan-outs wait for every answer, and a p99 is known from
// about 100 of them in the window
for (let i = 0; i < 120; i++) await fanOut(1_000, "always-sync");

for (const budgetMs of [1_000, 100, 10]) {
  const { classification: c, action } = await fanOut(budgetMs);
  console.log(
    `budget ${budgetMs} ms, fan-out p50 ${c.fanoutP50Ms.toFixed(0)} / p99 ${c.fanoutP99Ms.toFixed(0)} ms` +
      ` -> ${c.mode} (${c.reason}), action ${String(action)}`,
  );
}
