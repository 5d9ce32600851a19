import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { SimClock } from "../../src/clock/sim-clock.js";
import { AbandonLedger } from "../../src/engine/abandon-ledger.js";
import { HedgedFanout } from "../../src/engine/hedge-fanout.js";
import type { HedgedOutcome, HedgedSettlement } from "../../src/engine/hedge-outcome.js";
import { MemoryTransport } from "../../src/engine/memory-transport.js";
import { LatencyBook } from "../../src/estimate/latency-book.js";
import type { HedgePolicy } from "../../src/hedge/types.js";

const START = 1_000_000;
const TASK = { kind: "replica", payload: null };

/** Three replicas; `a` has a heavy tail. Latencies cycle through the lists (deterministic). */
function setup(policy: HedgePolicy, tail: readonly number[], seed = 1) {
  const clock = new SimClock({ start: START });
  const transport = new MemoryTransport(clock, { seed });
  const cycle = (list: readonly number[]) => {
    let i = 0;
    return () => list[i++ % list.length] as number;
  };
  transport.addPeer("a", { latency: cycle(tail) });
  transport.addPeer("b", { latency: cycle([12, 15, 18, 11, 14]) });
  transport.addPeer("c", { latency: cycle([13, 16, 10, 17, 12]) });
  const book = new LatencyBook({ windowMs: 600_000, minSamples: 20 }, clock);
  for (let i = 0; i < 100; i++) {
    book.record("a", tail[i % tail.length] as number, START);
    book.record("b", 10 + (i % 9), START);
    book.record("c", 10 + (i % 8), START);
  }
  const ledger = new AbandonLedger({ windowMs: 600_000 });
  const hedged = new HedgedFanout({ transport, book, clock, ledger, policy });
  return { clock, transport, book, ledger, hedged };
}

async function runMany(
  s: ReturnType<typeof setup>,
  n: number,
  budgetMs: number,
): Promise<{ outcome: HedgedOutcome; settlement: HedgedSettlement }[]> {
  const out: { outcome: HedgedOutcome; settlement: HedgedSettlement }[] = [];
  for (let i = 0; i < n; i++) {
    const outcome = await s.clock.runUntilSettled(
      s.hedged.run(TASK, { replicas: ["a", "b", "c"], k: 1, budgetMs }),
    );
    const settlement = await s.clock.runUntilSettled(outcome.settled);
    out.push({ outcome, settlement });
    await s.clock.advance(5);
  }
  return out;
}

const TAIL = [15, 14, 16, 13, 17, 15, 14, 400, 16, 900];

describe("HedgedFanout", () => {
  it("every loser is cancelled, recorded censored, and its real lost work charged to the ledger", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom<HedgePolicy>(
          { name: "gated" },
          { name: "fixed-delay", delayMs: 5 },
          { name: "p95" },
          { name: "percentile", maxExtraLoad: 0.3 },
        ),
        fc.integer({ min: 30, max: 600 }),
        fc.integer({ min: 1, max: 1_000 }),
        async (policy, budgetMs, seed) => {
          const s = setup(policy, TAIL, seed);
          const censoredBefore = ["a", "b", "c"].map(
            (p) => s.book.estimate(p, s.clock.now()).censoredEnds ?? 0,
          );
          const runs = await runMany(s, 12, budgetMs);
          let charged = 0;
          let cut = 0;
          for (const { outcome, settlement } of runs) {
            expect(settlement.branches).toHaveLength(outcome.branches.length);
            for (const r of settlement.branches) {
              expect(r.unsettled).toBeUndefined();
              if (r.outcome === "committed") continue;
              // a loser (or a branch cut at the deadline) was stopped by us and reported its lost work
              expect(["abandoned", "late"]).toContain(r.outcome);
              expect(["abandoned", "deadline"]).toContain(r.result.kind);
              cut++;
              charged += r.lostWorkMs;
            }
            expect(settlement.abandonCostMs).toBeCloseTo(
              settlement.branches.reduce((x, r) => x + r.lostWorkMs, 0),
              6,
            );
            if (!outcome.deadlineMissed) expect(outcome.answers.size).toBe(1);
          }
          const ledger = s.ledger.stats();
          expect(ledger.cutBranches).toBe(cut);
          expect(ledger.chargedMs).toBeCloseTo(charged, 6);
          const transportAbandoned = ["a", "b", "c"].reduce((x, p) => x + s.transport.stats(p).abandoned, 0);
          expect(transportAbandoned).toBeGreaterThanOrEqual(
            cut - runs.filter((r) => r.outcome.deadlineMissed).length * 3,
          );
          const censoredAfter = ["a", "b", "c"].map(
            (p) => s.book.estimate(p, s.clock.now()).censoredEnds ?? 0,
          );
          const grew = censoredAfter.reduce((x, v, i) => x + v - (censoredBefore[i] as number), 0);
          expect(grew).toBe(cut);
        },
      ),
      { numRuns: 12 },
    );
  });

  it("gated: a backup only where it can land; at a budget below the replicas' p99 it sends none, a fixed delay does", async () => {
    const gated = setup({ name: "gated" }, TAIL);
    const fixed = setup({ name: "fixed-delay", delayMs: 5 }, TAIL);
    const g = await runMany(gated, 30, 16);
    const f = await runMany(fixed, 30, 16);
    expect(g.flatMap((r) => r.outcome.backups)).toHaveLength(0);
    const fixedBackups = f.flatMap((r) => r.outcome.backups);
    expect(fixedBackups.length).toBeGreaterThan(0);
    expect(fixedBackups.every((b) => !b.landable)).toBe(true);
    expect(fixed.hedged.stats().unlandable).toBe(fixedBackups.length);
    expect(gated.hedged.stats().refused["cannot-land"]).toBeGreaterThan(0);
  });

  it("gated: backs up a primary caught in its tail, and the backup wins", async () => {
    const s = setup({ name: "gated" }, TAIL);
    const runs = await runMany(s, 30, 300);
    const backups = runs.flatMap((r) => r.outcome.backups);
    expect(backups.length).toBeGreaterThan(0);
    expect(backups.every((b) => b.landable && b.backs === "a")).toBe(true);
    for (const d of runs.flatMap((r) => r.outcome.decisions))
      if (d.decision.action === "send")
        expect(d.decision.remainingMs).toBeGreaterThan(d.decision.backupP99Ms + d.decision.costMs);
    expect(s.hedged.stats().won).toBeGreaterThan(0);
    // the slow calls of `a` were cut: no miss, and well under the tail's 400 ms
    expect(runs.filter((r) => r.outcome.deadlineMissed)).toHaveLength(0);
    expect(Math.max(...runs.map((r) => r.outcome.elapsedMs))).toBeLessThan(300);
    // fewer backups than a fixed 5 ms delay sends
    const f = setup({ name: "fixed-delay", delayMs: 5 }, TAIL);
    await runMany(f, 30, 300);
    expect(backups.length).toBeLessThan(f.hedged.stats().issued);
  });

  it("gated: a spare whose estimate cannot be used is passed over for the next one", async () => {
    const s = setup({ name: "gated" }, TAIL);
    s.transport.addPeer("cold", { latency: 12 }); // never sampled: its estimate is unknown
    const runs: HedgedOutcome[] = [];
    for (let i = 0; i < 30; i++) {
      runs.push(
        await s.clock.runUntilSettled(
          s.hedged.run(TASK, { replicas: ["a", "cold", "b"], k: 1, budgetMs: 300 }),
        ),
      );
      await s.clock.advance(5);
    }
    const backups = runs.flatMap((r) => r.backups);
    expect(backups.length).toBeGreaterThan(0);
    expect(backups.every((b) => b.peer === "b" && b.landable)).toBe(true);
    // the cold spare is recorded refused for `a` only where no backup went out for `a`; the backup
    // itself, once out, may be refused the cold spare (the last one left)
    for (const r of runs) {
      const coldForA = r.decisions.filter((d) => d.backup === "cold" && d.primary === "a");
      if (r.backups.some((b) => b.backs === "a")) expect(coldForA).toHaveLength(0);
      for (const d of r.decisions.filter((x) => x.backup === "cold"))
        expect(d.decision.reason).toBe("backup-estimate-unknown");
    }
  });

  it("refuses bad input with the field named", async () => {
    const s = setup({ name: "gated" }, TAIL);
    await expect(s.hedged.run(TASK, { replicas: ["a", "b"], k: 2, budgetMs: 10 })).rejects.toThrow(
      /hedged fan-out k: got 2/,
    );
    await expect(s.hedged.run(TASK, { replicas: ["a", "a"], k: 1, budgetMs: 10 })).rejects.toThrow(
      /distinct/,
    );
    expect(() => setup({ name: "fixed-delay" }, TAIL)).toThrow(/delayMs/);
  });
});
