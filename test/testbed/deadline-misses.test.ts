/** The report's deadline misses: counted by mode, each with its timing, and set against never's. */
import { describe, expect, it } from "vitest";
import { deadlineMisses, missLines } from "../../src/testbed/deadline-misses.js";
import type { CallRecord } from "../../src/testbed/records.js";

const call = (policy: CallRecord["policy"], request: number, over: Partial<CallRecord> = {}): CallRecord => ({
  t: request * 1000,
  coordinator: "coord-90ms",
  budgetMs: 90,
  policy,
  request,
  truth: "hold",
  event: false,
  ok: true,
  rttMs: 10,
  mode: "degrade",
  deadlineMissed: false,
  infoGainPerCommitted: null,
  branches: [],
  ...over,
});

const timing = {
  arrivalLeftMs: 89,
  reserveMs: 30,
  reserveWantedMs: 60,
  // wanted 60 = 3 transit (the default scenario's deadlineReserveMs) + 32 overhead + 25 loop
  reserveOverheadMs: 32,
  reserveLoopMs: 25,
  queuedMs: 0.1,
  decideMs: 0.4,
  waitMs: 58.5,
  replyMs: 35,
};

describe("deadlineMisses", () => {
  const m = deadlineMisses([
    call("p99-boundary", 0, {
      mode: "synchronous",
      rttMs: 95,
      deadlineMissed: true,
      fanoutOverran: true,
      decidedBudgetMs: 58,
      timing,
    }),
    // ran past the coordinator's own deadline, but the caller had the reply in time: not a miss
    call("p99-boundary", 3, { mode: "synchronous", rttMs: 80, fanoutOverran: true }),
    call("p99-boundary", 1, { ok: false, code: "DEADLINE_EXCEEDED", rttMs: 91, deadlineMissed: true }),
    // no peer answered by the deadline: the prior, in time
    call("p99-boundary", 2, { mode: "synchronous", rttMs: 85, noAnswer: true }),
    call("never", 0),
    call("never", 1, { ok: false, code: "DEADLINE_EXCEEDED", rttMs: 92, deadlineMissed: true }),
    call("never", 2),
  ]);

  it("counts misses by mode and sets them against never's on the same requests", () => {
    const rule = m["p99-boundary"]!["coord-90ms"]!;
    expect(rule).toMatchObject({
      fanouts: 4,
      misses: 2,
      fanout_overran: 2,
      no_answer: 1,
      by_mode: { synchronous: 1, error: 1 },
      never_missed_too: 1,
    });
    expect(m.never!["coord-90ms"]).toMatchObject({ misses: 1, never_missed_too: 1 });
  });

  it("shows where each miss's time went, and only the caller's view for a failed call", () => {
    const [sync, failed] = m["p99-boundary"]!["coord-90ms"]!.calls;
    expect(sync).toMatchObject({
      mode: "synchronous",
      late_ms: 5,
      reserve_wanted_ms: 60,
      reserve_overhead_ms: 32,
      reserve_loop_ms: 25,
      wait_ms: 58.5,
      reply_ms: 35,
    });
    expect(failed).toMatchObject({ mode: "error", code: "DEADLINE_EXCEEDED", late_ms: 1, wait_ms: null });
  });

  it("prints one line per policy", () => {
    expect(missLines(m, "coord-90ms", ["p99-boundary", "never"])).toEqual([
      "  p99-boundary   coord-90ms  2 of 4 (50.0%): synchronous 1, error 1; never missed 1 of these too; 2 fan-out(s) ran past the reserve; 1 answered with the prior (no peer answered)",
      "  never          coord-90ms  1 of 3 (33.3%): error 1",
    ]);
  });
});
