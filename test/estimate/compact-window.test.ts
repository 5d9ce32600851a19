import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { LatencyBook } from "../../src/estimate/latency-book.js";
import { resolveOptions } from "../../src/estimate/options.js";
import { PeerLatency } from "../../src/estimate/peer-latency.js";
import { createRng, logNormal } from "../../src/util/rng.js";
import { ManualClock } from "./helpers.js";

/** The exact sample quantile the window's is compared with: the ⌈q·n⌉-th smallest sample. */
function exactQuantile(sorted: readonly number[], q: number): number {
  return sorted[Math.max(1, Math.ceil(q * sorted.length - 1e-9)) - 1]!;
}

describe("the compact window against the exact quantiles of the same samples", () => {
  it("p50 and p99 are within 2 % of the exact sample quantiles (property)", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 2 ** 31 - 1 }),
        fc.integer({ min: 20, max: 1024 }),
        fc.double({ min: 0.1, max: 500, noNaN: true }),
        fc.double({ min: 0.05, max: 2, noNaN: true }),
        fc.boolean(),
        (seed, n, median, sigma, bimodal) => {
          const clock = new ManualClock();
          const peer = new PeerLatency("p", resolveOptions({ windowMs: 10_000, minSamples: 1 }), clock);
          const rng = createRng(seed);
          const samples: number[] = [];
          for (let i = 0; i < n; i++) {
            const m = bimodal && rng() < 0.1 ? median * 20 : median;
            const ms = Math.min(60_000, Math.max(0.1, logNormal(rng, m, sigma)));
            // the window keeps integer µs: compare against the same samples
            const us = Math.round(ms * 1000);
            samples.push(us / 1000);
            peer.record(us / 1000, clock.t);
          }
          samples.sort((a, b) => a - b);
          const e = peer.estimate(clock.t);
          expect(e.p50Kind).toBe("known");
          // known with at least 1 / (1 - 0.99) = 100 completions; before, the largest one, a lower bound
          expect(e.p99Kind).toBe(n >= 100 ? "known" : "lower-bound");
          expect(Math.abs(e.p50Ms / exactQuantile(samples, 0.5) - 1)).toBeLessThanOrEqual(0.02);
          expect(Math.abs(e.p99Ms / exactQuantile(samples, 0.99) - 1)).toBeLessThanOrEqual(0.02);
        },
      ),
      { numRuns: 300, seed: 23 },
    );
  });

  // estimatedFootprintInBytes counts the typed arrays (a lower bound); the heap a peer costs is measured
  // by `npm run bench -- estimate` (14.8 KiB with 50 censored ends). This is the worst case: every ring
  // full, 1,024 censored ends among them.
  it("holds at most 24 KiB of arrays per tracked peer with every ring full and calls in flight", () => {
    const clock = new ManualClock();
    const book = new LatencyBook({ windowMs: 60_000 }, clock);
    const rng = createRng(3);
    for (let i = 0; i < 1_000; i++) book.record("p", logNormal(rng, 20, 0.8), clock.t);
    const peer = book.peerOf("p");
    for (let i = 0; i < 1_024; i++) peer.recordCensored(rng() * 60, clock.t);
    for (let i = 0; i < 4; i++) book.begin("p", clock.t, clock.t + 1_000);
    book.estimate("p", clock.t + 1);
    expect(book.estimatedFootprintInBytes).toBeLessThanOrEqual(24 * 1024);
  });
});

describe("the active set", () => {
  it("a peer idle for activeIdleMs leaves (its estimate is dropped); one in use stays", () => {
    const clock = new ManualClock();
    const book = new LatencyBook({ windowMs: 1_000, minSamples: 1, activeIdleMs: 3_000 }, clock);
    const left: string[] = [];
    book.onLeave = (peer, cause) => left.push(`${peer}:${cause}`);
    book.record("idle", 5, clock.t);
    const start = clock.t;
    for (clock.t = start; clock.t < start + 4_000; clock.t += 100) book.record("busy", 5, clock.t);
    expect(book.tracks("idle")).toBe(false);
    expect(book.tracks("busy")).toBe(true);
    expect(left).toEqual(["idle:idle"]);
    expect(book.estimate("idle", clock.t).reason).toBe("never-sampled");
    expect(book.activeSet()).toEqual({ size: 1, leftIdle: 1, leftFull: 0 });
  });

  it("a peer with a call in flight never leaves as idle", () => {
    const clock = new ManualClock();
    const book = new LatencyBook({ windowMs: 1_000, activeIdleMs: 1_000 }, clock);
    const call = book.begin("slow", clock.t, clock.t + 10_000);
    clock.t += 5_000;
    book.sweep(clock.t);
    expect(book.tracks("slow")).toBe(true);
    call.complete();
    clock.t += 1_000;
    book.sweep(clock.t);
    expect(book.tracks("slow")).toBe(false);
  });

  it("past maxActivePeers the least recently used peer leaves", () => {
    const clock = new ManualClock();
    const book = new LatencyBook({ maxActivePeers: 3 }, clock);
    for (const id of ["a", "b", "c"]) {
      book.record(id, 5, clock.t);
      clock.t += 1;
    }
    book.record("a", 5, clock.t); // a is now the most recent; b the least
    clock.t += 1;
    book.record("d", 5, clock.t);
    expect(book.peers().sort()).toEqual(["a", "c", "d"]);
    expect(book.activeSet().leftFull).toBe(1);
  });
});
