import { describe, expect, it } from "vitest";
import { MEDIAN_P99_REFRESH_MS, PeerHealth, healthReportOf } from "../../src/mesh/membership/health.js";
import type { BranchRecord } from "../../src/engine/outcome.js";

const peers = ["a", "b", "c", "d", "e"];

function withPeers(h: PeerHealth, now: number): void {
  for (const p of peers) h.report(p, { kind: "ok", latencyMs: 10 }, now);
}

describe("PeerHealth", () => {
  it("ejects after consecutive failures, with backoff, and returns through probation", () => {
    const h = new PeerHealth({ failureThreshold: 3, baseEjectionMs: 1_000 });
    const events: string[] = [];
    h.onEject = (e) => events.push(`eject ${e.peer} ${e.cause} ${e.ejections} ${e.untilMs}`);
    h.onReturn = (p) => events.push(`return ${p}`);
    withPeers(h, 0);
    for (let i = 0; i < 3; i++) h.report("a", { kind: "failed" }, 1);
    expect(h.admits("a", 500)).toBe(false);
    expect(h.filter(peers, 500)).toEqual(["b", "c", "d", "e"]);
    // Probation: admitted again; one bad branch ejects it for twice as long.
    expect(h.admits("a", 1_001)).toBe(true);
    h.report("a", { kind: "rejected" }, 1_001);
    expect(h.admits("a", 2_500)).toBe(false);
    expect(h.admits("a", 3_001)).toBe(true);
    h.report("a", { kind: "ok", latencyMs: 10 }, 3_001);
    expect(events).toEqual(["eject a failed 1 1001", "eject a rejected 2 3001", "return a"]);
    expect(h.stats(3_001)).toEqual({ ejected: 0, ejections: 2, returns: 1, refused: 0 });
  });

  it("reads the set's median p99 once per refresh, not once per answer, and still sees it move", () => {
    const ids = Array.from({ length: 40 }, (_, i) => `p${i}`);
    const p99 = new Map(ids.map((p) => [p, NaN]));
    let reads = 0;
    const h = new PeerHealth({
      failureThreshold: 1,
      p99Of: (p) => {
        reads++;
        return p99.get(p) ?? NaN;
      },
    });
    for (const p of ids) h.report(p, { kind: "ok", latencyMs: 10 }, 0);
    // the set is known; own p99s unknown, the median 10 ms from now on
    for (const p of ids) p99.set(p, 10);
    reads = 0;
    for (const p of ids) h.report(p, { kind: "ok", latencyMs: 10 }, 1_000);
    expect(reads).toBe(40 + 40); // each answer's own p99, and the median once
    // a peer 5× past the median is an outlier against the median read at this refresh…
    p99.set("p0", NaN); // (its own p99 unknown: only the median can judge it)
    h.report("p0", { kind: "ok", latencyMs: 60 }, 1_000);
    expect(h.admits("p0", 1_001)).toBe(false);
    // …and once the set's p99s move, the next refresh sees it: 60 ms is no outlier at a median of 20
    for (const p of ids) p99.set(p, 20);
    p99.set("p1", NaN);
    h.report("p1", { kind: "ok", latencyMs: 60 }, 1_000 + MEDIAN_P99_REFRESH_MS);
    expect(h.admits("p1", 1_001 + MEDIAN_P99_REFRESH_MS)).toBe(true);
    // a peer forgotten and one new within the refresh: the median is read afresh, not the old set's
    const t = 2_000 + MEDIAN_P99_REFRESH_MS;
    h.report("p2", { kind: "ok", latencyMs: 10 }, t); // median read: 20
    for (const p of ids) p99.set(p, 10);
    h.forget("p3");
    p99.set("q", NaN);
    h.report("q", { kind: "ok", latencyMs: 60 }, t); // 60 > 5 × 10: an outlier against the fresh median
    expect(h.admits("q", t + 1)).toBe(false);
  });

  it("a success resets the run of failures", () => {
    const h = new PeerHealth({ failureThreshold: 3 });
    h.report("a", { kind: "failed" }, 0);
    h.report("a", { kind: "failed" }, 0);
    h.report("a", { kind: "ok", latencyMs: 1 }, 0);
    h.report("a", { kind: "failed" }, 0);
    h.report("a", { kind: "failed" }, 0);
    expect(h.admits("a", 0)).toBe(true);
  });

  it("latency outliers against the set's median p99 eject; an unknown p99 never does", () => {
    const p99 = new Map([
      ["a", 10],
      ["b", 10],
      ["c", 12],
      ["d", 11],
      ["e", 10],
    ]);
    const h = new PeerHealth({ failureThreshold: 2, outlierFactor: 5, p99Of: (p) => p99.get(p) ?? NaN });
    withPeers(h, 0);
    h.report("a", { kind: "ok", latencyMs: 49 }, 1);
    h.report("a", { kind: "ok", latencyMs: 49 }, 1);
    expect(h.admits("a", 1)).toBe(true);
    h.report("a", { kind: "ok", latencyMs: 200 }, 1);
    h.report("a", { kind: "ok", latencyMs: 200 }, 1);
    expect(h.admits("a", 1)).toBe(false);
    const blind = new PeerHealth({ failureThreshold: 1 });
    blind.report("x", { kind: "ok", latencyMs: 1e6 }, 0);
    expect(blind.admits("x", 0)).toBe(true);
  });

  it("ejects at most maxEjectedPercent of the peers (at least one), and says so", () => {
    const h = new PeerHealth({ failureThreshold: 1, maxEjectedPercent: 20 });
    const refused: string[] = [];
    h.onRefused = (p) => refused.push(p);
    withPeers(h, 0);
    for (const p of peers) h.report(p, { kind: "failed" }, 1);
    expect(h.ejected(1)).toEqual(["a"]);
    expect(refused).toEqual(["b", "c", "d", "e"]);
  });

  it("rejects out-of-range options in the one message style", () => {
    expect(() => new PeerHealth({ maxEjectedPercent: 101 })).toThrow(/health\.maxEjectedPercent: got 101/);
  });
});

describe("healthReportOf", () => {
  const base = {
    peer: "a",
    branchId: "1",
    deadline: 0,
    latencyMs: 7,
    lostWorkMs: 0,
    decisionRelevant: false,
  };
  it("maps an invalid answer to rejected, and a branch cut at its deadline or abandoned by us to use only", () => {
    const rec = (r: Partial<BranchRecord>): BranchRecord =>
      ({ ...base, outcome: "failed", ...r }) as BranchRecord;
    expect(healthReportOf(rec({ result: { kind: "failed", code: "INVALID_ANSWER", message: "x" } }))).toEqual(
      {
        kind: "rejected",
      },
    );
    expect(healthReportOf(rec({ result: { kind: "failed", code: "UNAVAILABLE", message: "x" } }))).toEqual({
      kind: "failed",
    });
    // "I do not serve this kind" is about the request, not the peer
    expect(healthReportOf(rec({ result: { kind: "failed", code: "NOT_FOUND", message: "x" } }))).toBe(
      undefined,
    );
    // slower than one caller's budget is no failure: the estimator records it as censored
    expect(healthReportOf(rec({ outcome: "late", result: { kind: "deadline", lostWorkMs: 0 } }))).toEqual({
      kind: "used",
    });
    expect(
      healthReportOf(rec({ outcome: "abandoned", result: { kind: "abandoned", lostWorkMs: 0 } })),
    ).toEqual({ kind: "used" });
    expect(
      healthReportOf(
        rec({ outcome: "committed", result: { kind: "answer", answer: 1, serviceMs: 1 } as never }),
      ),
    ).toEqual({ kind: "ok", latencyMs: 7 });
  });
});
