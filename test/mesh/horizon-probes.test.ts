/**
 * Horizon probes over real gRPC on loopback: a peer slower than the coordinator's budget. Without probes
 * every branch is cut at the deadline and the peer's p99 is only a lower bound at the horizon; with them
 * a few cut branches run on to their late answer and the p99 becomes known, beyond the budget.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { predicateModel } from "../../src/decision/predicate-model.js";
import { Coordinator } from "../../src/engine/coordinator.js";
import { HORIZON_PROBE_DEFAULTS } from "../../src/engine/horizon-probes.js";
import type { HorizonProbeOptions } from "../../src/engine/horizon-probes.js";
import { LatencyBook } from "../../src/estimate/latency-book.js";
import { GrpcTransport } from "../../src/mesh/grpc-transport.js";
import { HandlerRegistry } from "../../src/mesh/handler.js";
import { sleeper, startServer, until } from "./helpers.js";
import type { Started } from "./helpers.js";

const SLOW_MS = 300;
const BUDGET_MS = 40;
const FANOUTS = 24;

const model = predicateModel<unknown, string>({
  name: "any",
  prior: "none",
  decide: (answers) => String(answers.size),
  canFlip: (_answers, outstanding) => outstanding.length > 0,
  parseAnswer: (raw) => raw,
});

let peer: Started;

beforeAll(async () => {
  peer = await startServer({ handlers: new HandlerRegistry([sleeper()]) });
});

afterAll(async () => {
  await peer.server.close();
});

async function run(horizonProbe: HorizonProbeOptions) {
  const transport = new GrpcTransport();
  const book = new LatencyBook({ windowMs: 60_000, minSamples: 5 });
  const coordinator = new Coordinator({
    transport,
    book,
    ledger: { windowMs: 60_000 },
    explorationRate: 0,
    horizonProbe,
  });
  const task = { kind: "sleep", payload: { ms: SLOW_MS } };
  let returnedBeforeProbe = 0;
  for (let i = 0; i < FANOUTS; i++) {
    const outcome = await coordinator.fanOut(task, {
      peers: [peer.address],
      budgetMs: BUDGET_MS,
      model,
      policy: "always-sync",
      fallback: () => "none",
    });
    // the caller does not wait for a probe: it is still out when the fan-out returns
    for (const b of outcome.branches) if (b.probe === true && b.unsettled === true) returnedBeforeProbe++;
  }
  const issued = coordinator.stats().horizonProbes.issued;
  await until(() => {
    const s = coordinator.stats().horizonProbes;
    return s.completed + s.expired === issued;
  }, 5_000);
  // a cut branch still waiting for the peer's reply would count as censored at its current age
  await until(() => book.peerOf(peer.address).inFlightCount === 0, 5_000);
  const stats = coordinator.stats().horizonProbes;
  const estimate = book.estimate(peer.address, Date.now());
  const ledgerStats = coordinator.ledgers.of("always-sync").stats(Date.now());
  transport.close();
  return { stats, estimate, ledgerStats, returnedBeforeProbe };
}

describe("horizon probes over gRPC", () => {
  it("without probes, a peer slower than the budget has a p99 that is only a lower bound", async () => {
    const { stats, estimate } = await run({ share: 0 });
    expect(stats.issued).toBe(0);
    expect(estimate.p99Kind).toBe("lower-bound");
    // at the horizon: about the budget (higher only when a loaded machine let a call answer late)
    expect(estimate.p99Ms).toBeLessThan(SLOW_MS * 1.5);
  }, 20_000);

  it("with probes, the p99 reads the tail beyond the budget; probes are never charged", async () => {
    const { stats, estimate, ledgerStats, returnedBeforeProbe } = await run({
      share: 0.25,
      maxPerPeerPerWindow: 100,
      maxMs: 1_000,
    });
    // the peer's owed probes per window, and a quarter of one per cut branch
    expect(stats.issued).toBeGreaterThanOrEqual(1);
    expect(stats.issued).toBeLessThanOrEqual(
      HORIZON_PROBE_DEFAULTS.minPerPeerPerWindow + Math.ceil(1 + FANOUTS * 0.25),
    );
    expect(stats.completed).toBe(stats.issued);
    expect(returnedBeforeProbe).toBeGreaterThanOrEqual(1);
    expect(estimate.status).toBe("fresh");
    // the probes' completions took the mass censored at the budget: no horizon is left; the p99 is still
    // a lower bound only because a few dozen calls cannot know a 1 % tail (fewer than 100 completions)
    expect(estimate.horizonMs).toBe(Infinity);
    expect(estimate.samples).toBeLessThan(100);
    expect(estimate.p99Kind).toBe("lower-bound");
    expect(estimate.p99Ms).toBeGreaterThan(BUDGET_MS);
    // the late completion is the call's own answer: about the peer's service time, not the budget
    expect(estimate.p99Ms).toBeGreaterThanOrEqual(SLOW_MS * 0.9);
    expect(estimate.p99Ms).toBeLessThan(1_000);
    expect(ledgerStats.probeBranches).toBe(stats.issued);
  }, 20_000);

  it("the per-peer cap bounds the probes per window", async () => {
    const { stats } = await run({ share: 1, maxPerPeerPerWindow: 2, maxMs: 1_000 });
    expect(stats.issued).toBe(2);
  }, 20_000);
});
