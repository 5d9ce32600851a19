import fc from "fast-check";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
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

  it("holds at most 16 KiB per tracked peer in the state that holds the most the defaults allow", () => {
    const clock = new ManualClock();
    const book = worstCaseBook(1, clock);
    const peer = book.peerOf(peerId(0));
    const e = peer.estimate(clock.t);
    expect(e.samples).toBe(book.options.maxSamplesPerPeer);
    expect(e.censoredEnds).toBe(book.options.maxSamplesPerPeer);
    expect(peer.inFlightCount).toBe(book.options.maxInFlightPerPeer + UNTRACKED);
    expect(e.censored).toBe(book.options.maxInFlightPerPeer + UNTRACKED);
    expect(book.estimatedFootprintInBytes).toBeLessThanOrEqual(16 * 1024);
  });

  it("and the heap it takes, measured after a full collection, is at most 16 KiB a peer", () => {
    const gc = collector();
    const n = 1_000;
    worstCaseBook(n, new ManualClock()); // compiled and warmed, then dropped
    const before = heldBytes(gc);
    const clock = new ManualClock();
    const book = worstCaseBook(n, clock);
    const perPeer = (heldBytes(gc) - before) / n;
    // the book's own count reads a few percent below the heap (a peer's id and map entry are not in it);
    // the bound is looser, as other code the collector frees between the readings moves the heap figure
    expect(Math.abs(book.estimatedFootprintInBytes / n / perPeer - 1)).toBeLessThanOrEqual(0.15);
    expect(perPeer).toBeLessThanOrEqual(16 * 1024);
    expect(book.peers()).toHaveLength(n);
  });
});

/** Calls in flight past the cap in the worst case (any number costs the same: a count and a start). */
const UNTRACKED = 40;

const peerId = (i: number): string => `peer-${i.toString().padStart(4, "0")}`;

/**
 * `n` peers in the state that holds the most at the defaults: the samples' and the ends' rings full, the
 * ends spread over the whole trackable range (so the CDF merges every ended point it may), and
 * `maxInFlightPerPeer` calls in flight and `UNTRACKED` more (one more point); every CDF brought up to date.
 */
function worstCaseBook(n: number, clock: ManualClock): LatencyBook {
  const book = new LatencyBook({ windowMs: 60_000 }, clock);
  const { maxSamplesPerPeer, maxInFlightPerPeer, highestTrackableMs } = book.options;
  const rng = createRng(3);
  const logUniform = (): number => Math.exp(Math.log(0.001) + rng() * Math.log(highestTrackableMs / 0.001));
  for (let p = 0; p < n; p++) {
    const id = peerId(p);
    for (let i = 0; i < maxSamplesPerPeer; i++) book.record(id, logUniform(), clock.t);
    const peer = book.peerOf(id);
    for (let i = 0; i < maxSamplesPerPeer; i++) peer.recordCensored(logUniform(), clock.t);
    for (let i = 0; i < maxInFlightPerPeer + UNTRACKED; i++)
      book.begin(id, clock.t - rng() * 5_000, clock.t + 1_000);
  }
  clock.t += 1;
  for (const id of book.peers()) book.estimate(id, clock.t);
  return book;
}

function collector(): () => void {
  setFlagsFromString("--expose-gc");
  return runInNewContext("gc") as () => void;
}

/** Heap and ArrayBuffer bytes in use after two full collections. */
function heldBytes(gc: () => void): number {
  gc();
  gc();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}

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
