import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { SimClock } from "../../src/clock/sim-clock.js";
import { LatencyBook } from "../../src/estimate/latency-book.js";
import { canLand, decideBackup } from "../../src/hedge/decide-backup.js";
import { HEDGE_REASONS } from "../../src/hedge/reasons.js";
import type { HedgePolicy } from "../../src/hedge/types.js";

const START = 1_000_000;

/** A window per replica: completed latencies, and calls cut after some age (censored, maybe beyond all completions). */
const arbReplica = fc.record({
  done: fc.array(fc.double({ min: 0.5, max: 400, noNaN: true }), { maxLength: 60 }),
  cut: fc.array(fc.double({ min: 0.5, max: 2_000, noNaN: true }), { maxLength: 20 }),
});

const arbPolicy: fc.Arbitrary<HedgePolicy> = fc.oneof(
  fc.constant<HedgePolicy>({ name: "gated" }),
  fc.constant<HedgePolicy>({ name: "gated", maxExtraLoad: 0.05 }),
  fc.constant<HedgePolicy>({ name: "none" }),
  fc
    .double({ min: 1, max: 200, noNaN: true })
    .map<HedgePolicy>((delayMs) => ({ name: "fixed-delay", delayMs })),
  fc.constant<HedgePolicy>({ name: "percentile", maxExtraLoad: 0.05 }),
  fc.constant<HedgePolicy>({ name: "p95" }),
);

const arbMoment = fc.record({
  primary: arbReplica,
  backup: arbReplica,
  policy: arbPolicy,
  ageMs: fc.double({ min: 0, max: 1_000, noNaN: true }),
  remainingMs: fc.double({ min: 0.1, max: 1_500, noNaN: true }),
  ledgerCostMs: fc.double({ min: 0, max: 300, noNaN: true }),
  ceiling: fc.boolean(),
});

type Moment = typeof arbMoment extends fc.Arbitrary<infer T> ? T : never;

function decideAt(m: Moment) {
  const clock = new SimClock({ start: START });
  const book = new LatencyBook({ windowMs: 60_000, minSamples: 10 }, clock);
  for (const [peer, w] of [
    ["p", m.primary],
    ["b", m.backup],
  ] as const) {
    for (const ms of w.done) book.record(peer, ms, START);
    for (const ms of w.cut) book.peerOf(peer).recordCensored(ms, START);
  }
  // the primary is out: a call in flight, censored at its age
  book.begin("p", START, START + m.ageMs + m.remainingMs);
  const now = START + m.ageMs;
  const input = {
    policy: m.policy,
    now,
    deadline: now + m.remainingMs,
    primary: "p",
    primaryIssuedAt: START,
    primaryEstimate: book.estimate("p", now),
    backup: "b",
    backupEstimate: book.estimate("b", now),
    cdf: (peer: string, t: number) => book.cdf(peer, t, now),
    ledgerCostMs: m.ledgerCostMs,
    ceilingAdmits: () => m.ceiling,
  };
  return { input, decision: decideBackup(input) };
}

describe("decideBackup", () => {
  it("gated: never a backup whose replica's fresh p99 + abandon cost exceeds the remaining budget", () => {
    fc.assert(
      fc.property(arbMoment, (m) => {
        const { input, decision } = decideAt({ ...m, policy: { name: "gated" } });
        if (decision.action !== "send") return;
        const e = input.backupEstimate;
        expect(e.status).toBe("fresh");
        expect(e.p99Kind).not.toBe("lower-bound");
        expect(decision.costMs).toBeGreaterThanOrEqual(input.ledgerCostMs);
        expect(input.deadline - input.now).toBeGreaterThan(e.p99Ms + decision.costMs);
        expect(input.deadline - input.now).toBeGreaterThan(e.p99Ms + input.ledgerCostMs);
        expect(decision.gainMs).toBeGreaterThan(decision.costMs);
      }),
      { numRuns: 300 },
    );
  });

  it("a lower-bound p99 never establishes a gated backup", () => {
    fc.assert(
      fc.property(arbMoment, (m) => {
        const { input, decision } = decideAt({ ...m, policy: { name: "gated" } });
        if (input.backupEstimate.p99Kind === "lower-bound") expect(decision.action).not.toBe("send");
      }),
      { numRuns: 300 },
    );
  });

  it("every policy: the reason fits the action, the ceiling is asked before any budgeted send, landable is the rule's test", () => {
    fc.assert(
      fc.property(arbMoment, (m) => {
        const { decision } = decideAt(m);
        expect(HEDGE_REASONS[decision.reason].action).toBe(decision.action);
        if (decision.action === "wait") expect(decision.retryAt).toBeGreaterThan(START + m.ageMs - 1e-9);
        if (decision.action !== "send") return;
        expect(decision.landable).toBe(canLand(decision));
        if (m.policy.maxExtraLoad !== undefined) expect(m.ceiling).toBe(true);
        if (m.policy.name === "none") throw new Error("none sent a backup");
      }),
      { numRuns: 300 },
    );
  });

  it("gated: a primary deep in a heavy tail is backed up by a fast replica; a fresh healthy primary is not", () => {
    const fast = { done: Array.from({ length: 200 }, (_, i) => 10 + (i % 20)), cut: [] };
    const tailed = {
      done: [...fast.done.slice(0, 180), ...Array.from({ length: 20 }, (_, i) => 300 + i * 50)],
      cut: [],
    };
    const base = {
      primary: tailed,
      backup: fast,
      policy: { name: "gated" } as HedgePolicy,
      ledgerCostMs: 5,
      ceiling: true,
    };
    expect(decideAt({ ...base, ageMs: 60, remainingMs: 200 }).decision.reason).toBe("tail-gain-exceeds-cost");
    expect(decideAt({ ...base, ageMs: 0, remainingMs: 260 }).decision.action).toBe("wait");
    // the backup's p99 (~29 ms) + cost does not fit in 30 ms
    expect(decideAt({ ...base, ageMs: 60, remainingMs: 30 }).decision.reason).toBe("cannot-land");
  });
});
