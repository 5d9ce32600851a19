/**
 * The engine's decision path as a caller pays it: `Coordinator.fanOut` steps 1–7 (budget, route,
 * fan-out estimate, ledger cost, relevance, classification) plus the degrade branch and the outcome
 * object, for 8, 40 and 200 required peers with a cached estimate. The budget sits below the fan-out
 * p50 so the rule says degrade and no branch is issued: what is measured is the decision, not I/O.
 */
import { pathToFileURL } from "node:url";
import { build } from "hdr-histogram-js";
import { SimClock } from "../src/clock/sim-clock.js";
import { quorumVote } from "../src/decision/quorum-vote.js";
import { Coordinator } from "../src/engine/coordinator.js";
import type { PeerTransport } from "../src/engine/transport.js";
import { LatencyBook } from "../src/estimate/latency-book.js";
import { createRng, logNormal } from "../src/util/rng.js";
import { recordFigures } from "./report.js";
import type { Figure } from "./report.js";

const unused: PeerTransport = {
  branch: () => Promise.resolve({ kind: "failed", code: "BENCH", message: "no branches in this bench" }),
};

export async function run(resultsFile?: string): Promise<void> {
  const figures: Record<string, Figure> = {};
  for (const n of [8, 40, 200]) {
    const clock = new SimClock({ start: 1_000_000 });
    const rng = createRng(n);
    const book = new LatencyBook({ windowMs: 10_000, fanoutTickMs: 1 }, clock);
    const peers = Array.from({ length: n }, (_, i) => `peer-${i}`);
    for (const id of peers) {
      for (let i = 0; i < 500; i++)
        book.record(id, logNormal(rng, 20 + rng() * 20, 0.5), clock.now() - rng() * 5_000);
    }
    const coordinator = new Coordinator({ transport: unused, book, clock });
    const model = quorumVote({ prior: "no" });
    const options = { peers, budgetMs: 5, model, fallback: () => "no" };
    const task = { kind: "vote", payload: null };
    const h = build({ numberOfSignificantValueDigits: 2 });
    const iterations = n === 200 ? 20_000 : 50_000;
    for (let i = 0; i < iterations; i++) {
      const start = process.hrtime.bigint();
      await coordinator.fanOut(task, options);
      h.recordValue(Number(process.hrtime.bigint() - start));
    }
    figures[`fanOut decision (steps 1-7, degrade), ${n} peers (p50)`] = {
      value: h.getValueAtPercentile(50) / 1000,
      unit: "µs",
      note: "includes one await of the async fanOut",
    };
    figures[`fanOut decision (steps 1-7, degrade), ${n} peers (p99)`] = {
      value: h.getValueAtPercentile(99) / 1000,
      unit: "µs",
      ...(n === 40 ? { target: 10 } : {}),
    };
  }
  recordFigures("engine", figures, resultsFile);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) await run();
