/**
 * The engine's decision path as a caller pays it: `Coordinator.fanOut` steps 1–7 (budget, route,
 * fan-out estimate, ledger cost, relevance, classification) plus the degrade branch and the outcome
 * object, for 8, 40 and 200 required peers with a cached estimate. The budget sits below the fan-out
 * p50 so the rule says degrade and no branch is issued: what is measured is the decision, not I/O.
 */
import { pathToFileURL } from "node:url";
import { build } from "hdr-histogram-js";
import { SimClock } from "../src/clock/sim-clock.js";
import { predicateModel } from "../src/decision/predicate-model.js";
import { quorumVote } from "../src/decision/quorum-vote.js";
import { leaveOneOut, scoreRelevance } from "../src/decision/score-relevance.js";
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
  Object.assign(figures, await wholeFanout(), relevanceScoring());
  recordFigures("engine", figures, resultsFile);
}

/**
 * A whole synchronous fan-out to 8 peers through the engine (steps 1–9: decide, issue, collect, record)
 * over a transport that answers every branch on the next turn of the event loop: what the engine itself
 * costs a fan-out, without I/O. The real clock and a real LatencyBook, warm.
 */
async function wholeFanout(): Promise<Record<string, Figure>> {
  const answer = { kind: "answer", answer: { ok: true }, serviceMs: 1, queueMs: 0 } as const;
  const transport: PeerTransport = {
    branch: () => new Promise((resolve) => setImmediate(resolve, answer)),
  };
  const coordinator = new Coordinator({ transport, book: new LatencyBook() });
  const peers = Array.from({ length: 8 }, (_, i) => `peer-${i}`);
  const model = predicateModel<unknown, string>({ prior: "none", decide: () => "ok", canFlip: () => true });
  const options = { peers, budgetMs: 5_000, model, policy: "always-sync" } as const;
  const task = { kind: "echo", payload: { q: 1 } };
  const fanOut = (): Promise<unknown> => coordinator.fanOut(task, options);
  for (let i = 0; i < 5_000; i++) await fanOut();
  const baseline = (): Promise<unknown> =>
    Promise.all(peers.map(() => transport.branch("p", undefined as never, undefined as never)));
  const perFanout = async (f: () => Promise<unknown>): Promise<{ wallUs: number; cpuUs: number }> => {
    const n = 20_000;
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    for (let i = 0; i < n; i++) await f();
    const cpu = process.cpuUsage(cpu0);
    return { wallUs: ((performance.now() - t0) * 1000) / n, cpuUs: (cpu.user + cpu.system) / n };
  };
  const base = await perFanout(baseline);
  const engine = await perFanout(fanOut);
  return {
    "whole fan-out, 8 peers, instant transport: engine wall": {
      value: engine.wallUs,
      unit: "µs",
      note: "Coordinator.fanOut, synchronous, one at a time",
    },
    "whole fan-out, 8 peers, instant transport: engine CPU": { value: engine.cpuUs, unit: "µs" },
    "whole fan-out, 8 peers, instant transport: Promise.all of the same 8 calls, wall": {
      value: base.wallUs,
      unit: "µs",
      note: "the floor: the transport alone",
    },
    "whole fan-out, 8 peers: engine's own wall per fan-out": {
      value: engine.wallUs - base.wallUs,
      unit: "µs",
    },
  };
}

/**
 * Scoring the committed answers of one fan-out (`scoreRelevance`, run on every fan-out that committed
 * any), side by side: a quorum vote's one-pass count against leave-one-out by `decide` (a copy and a
 * decide per answer), at 40 and 200 votes, CPU µs per fan-out.
 */
function relevanceScoring(): Record<string, Figure> {
  const out: Record<string, Figure> = {};
  const model = quorumVote({ prior: "no", options: ["yes", "no", "maybe"] });
  for (const n of [40, 200]) {
    const rng = createRng(n);
    const answers = new Map(
      Array.from({ length: n }, (_, i) => [
        `peer-${i}`,
        { vote: rng() < 0.5 ? "yes" : rng() < 0.7 ? "no" : "maybe" },
      ]),
    );
    const cpuPer = (f: () => unknown, iterations: number): number => {
      for (let i = 0; i < iterations / 10; i++) f();
      const cpu0 = process.cpuUsage();
      for (let i = 0; i < iterations; i++) f();
      const cpu = process.cpuUsage(cpu0);
      return (cpu.user + cpu.system) / iterations;
    };
    const iterations = n === 200 ? 2_000 : 20_000;
    out[`relevance scoring, ${n} votes: one pass (quorumVote.decisionRelevant)`] = {
      value: cpuPer(() => scoreRelevance(model, answers), iterations),
      unit: "µs",
      note: "CPU per fan-out, scoreRelevance",
    };
    out[`relevance scoring, ${n} votes: leave-one-out by decide`] = {
      value: cpuPer(() => leaveOneOut(model, answers), iterations),
      unit: "µs",
      note: "what scoreRelevance did before models could count it",
    };
  }
  return out;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) await run();
