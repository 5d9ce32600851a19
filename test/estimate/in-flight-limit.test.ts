import { describe, expect, it } from "vitest";
import { LimitLog } from "../../src/mesh/limit-log.js";
import { LatencyBook } from "../../src/estimate/latency-book.js";

describe("LatencyBook.onLimit", () => {
  it("reports estimator.maxInFlightPerPeer when a peer is past it, rate-limited by the node's LimitLog", () => {
    const lines: [string, Record<string, unknown>][] = [];
    const limits = new LimitLog((limit, fields) => lines.push([limit, fields]), 1_000);
    const book = new LatencyBook({ maxInFlightPerPeer: 2 });
    book.onLimit = (limit, fields) => limits.report(limit, fields, 0);
    const now = Date.now();
    const calls = [book.begin("a", now), book.begin("a", now)];
    expect(lines).toEqual([]);
    calls.push(book.begin("a", now), book.begin("a", now));
    expect(lines).toEqual([["estimator.maxInFlightPerPeer", { peer: "a", inFlight: 3, max: 2 }]]);
    // still seen while out: four calls censored
    expect(book.estimate("a", now + 5).censored).toBe(4);
    for (const c of calls) c.complete(5);
    book.begin("a", now);
    expect(lines).toHaveLength(1);
  });
});
