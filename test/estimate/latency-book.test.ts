import { describe, expect, it } from "vitest";
import { TailswarmError } from "../../src/errors.js";
import { LatencyBook } from "../../src/estimate/latency-book.js";
import { ManualClock } from "./helpers.js";

function feed(book: LatencyBook, peer: string, ms: number, count: number, now: number): void {
  for (let i = 0; i < count; i++) book.record(peer, ms, now);
}

describe("LatencyBook options", () => {
  it("fills defaults", () => {
    const book = new LatencyBook();
    expect(book.options).toMatchObject({
      windowMs: 10_000,
      slices: 6,
      minSamples: 20,
      maxSampleAgeMs: 10_000,
      highestTrackableMs: 60_000,
      fanoutTickMs: 1,
    });
    expect(new LatencyBook({ windowMs: 4_000 }).options.maxSampleAgeMs).toBe(4_000);
  });

  const bad: [Record<string, unknown>, RegExp][] = [
    [{ windowMs: 0 }, /estimator\.windowMs: got 0, expected an integer >= 100 <= 3600000/],
    [{ windowMs: Number.NaN }, /estimator\.windowMs: got NaN, expected an integer >= 100/],
    [{ slices: 2.5 }, /estimator\.slices: got 2\.5, expected an integer >= 1 <= 64/],
    [{ minSamples: -1 }, /estimator\.minSamples: got -1, expected/],
    [{ maxSampleAgeMs: "10" }, /estimator\.maxSampleAgeMs: got "10", expected a number > 0/],
    [
      { highestTrackableMs: 1e12 },
      /estimator\.highestTrackableMs: got 1000000000000, expected a number >= 2 <= 2000000/,
    ],
    [{ fanoutTickMs: -1 }, /estimator\.fanoutTickMs: got -1, expected a number >= 0/],
    [{ windowsMs: 5 }, /estimator\.windowsMs: got 5, expected a known option \(one of windowMs, slices/],
  ];
  for (const [options, message] of bad) {
    it(`rejects ${JSON.stringify(options)} with INVALID_CONFIG naming key, value and expectation`, () => {
      let error: unknown;
      try {
        new LatencyBook(options);
      } catch (e) {
        error = e;
      }
      expect(TailswarmError.is(error, "INVALID_CONFIG")).toBe(true);
      expect((error as Error).message).toMatch(message);
    });
  }
});

describe("LatencyBook peers", () => {
  it("tracks, forgets and resets peers; unknown peers are never-sampled", () => {
    const clock = new ManualClock();
    const book = new LatencyBook({}, clock);
    expect(book.estimate("x", clock.t)).toMatchObject({ status: "unknown", reason: "never-sampled" });
    feed(book, "a", 5, 30, clock.t);
    book.begin("b", clock.t, clock.t + 100);
    expect(book.peers().sort()).toEqual(["a", "b"]);
    expect(book.estimate("a", clock.t).status).toBe("fresh");
    expect(book.cdf("a", 10, clock.t)).toBe(1);
    book.reset("a");
    expect(book.estimate("a", clock.t).reason).toBe("peer-reset");
    book.forget("a");
    expect(book.peers()).toEqual(["b"]);
    expect(book.estimate("a", clock.t).reason).toBe("never-sampled");
  });

  it("stays under 96 KiB per tracked peer", () => {
    const clock = new ManualClock();
    const book = new LatencyBook({}, clock);
    for (let i = 0; i < 10; i++) feed(book, `p${i}`, 1 + i, 50, clock.t);
    expect(book.estimatedFootprintInBytes / 10).toBeLessThan(96 * 1024);
  });
});

describe("LatencyBook.fanout", () => {
  it("is unknown when any member is, naming it, and gives numbers when every member has data", () => {
    const clock = new ManualClock();
    const book = new LatencyBook({}, clock);
    feed(book, "a", 10, 30, clock.t);
    feed(book, "b", 20, 5, clock.t);
    const f = book.fanout(["a", "b"], { kind: "all" }, clock.t);
    expect(f).toMatchObject({ status: "unknown", unknownPeers: ["b"], size: 2, minSamples: 5 });
    expect(f.p99Ms).toBeGreaterThan(19);
    const g = book.fanout(["a", "c"], { kind: "all" }, clock.t);
    expect(g).toMatchObject({ status: "unknown", unknownPeers: ["c"], maxAgeMs: Infinity, minSamples: 0 });
    expect(g.p50Ms).toBeNaN();
    feed(book, "b", 20, 15, clock.t);
    clock.t += 2;
    const h = book.fanout(["a", "b"], { kind: "all" }, clock.t);
    expect(h).toMatchObject({ status: "fresh", unknownPeers: [], minSamples: 20, maxAgeMs: 2 });
    expect(h.p50Ms).toBeGreaterThanOrEqual(19.8);
    expect(h.p99Ms).toBeGreaterThanOrEqual(h.p50Ms);
  });

  it("gives an unknown estimate a p50 floor: the largest member's, however thin, when it needs every answer", () => {
    const clock = new ManualClock();
    const book = new LatencyBook({ fanoutTickMs: 0 }, clock);
    feed(book, "a", 10, 30, clock.t);
    feed(book, "b", 40, 30, clock.t);
    feed(book, "c", 100, 5, clock.t); // too few to be fresh, but five answers all at 100 ms
    const f = book.fanout(["b", "a", "c"], { kind: "all" }, clock.t);
    expect(f).toMatchObject({ status: "unknown", unknownPeers: ["c"] });
    // every fan-out waits for c: at least 100 ms (its bucket's low edge, within 1.6 %)
    expect(f.p50FloorMs).toBeGreaterThanOrEqual(98.4);
    expect(f.p50FloorMs).toBeLessThanOrEqual(100);
    // not for a quorum (more members can make it sooner), nor a fresh estimate, nor with nothing seen
    expect(book.fanout(["a", "b", "c"], { kind: "quorum", k: 2 }, clock.t).p50FloorMs).toBeUndefined();
    expect(book.fanout(["a", "b"], { kind: "all" }, clock.t).p50FloorMs).toBeUndefined();
    expect(book.fanout(["d", "e"], { kind: "all" }, clock.t).p50FloorMs).toBeUndefined();
    // a thin member whose calls were cut at 60 ms, and one answer: 60 ms at least, as six of seven say
    for (let i = 0; i < 6; i++) book.peerOf("e").recordCensored(60, clock.t);
    book.peerOf("e").record(5, clock.t);
    const cut = book.fanout(["a", "e"], { kind: "all" }, clock.t).p50FloorMs;
    expect(cut).toBeGreaterThanOrEqual(59);
    expect(cut).toBeLessThanOrEqual(60);
    // one cut call alone decides nothing
    book.peerOf("g").recordCensored(60, clock.t);
    expect(book.fanout(["a", "g"], { kind: "all" }, clock.t).p50FloorMs).toBeCloseTo(10, 0);
  });

  it("takes no p50 floor from a source whose newest observation is older than maxSampleAgeMs", () => {
    const clock = new ManualClock();
    const book = new LatencyBook({ fanoutTickMs: 0, windowMs: 10_000, maxSampleAgeMs: 2_000 }, clock);
    feed(book, "c", 100, 5, clock.t); // too few to be fresh, five answers at 100 ms
    expect(book.fanout(["c", "never-seen"], { kind: "all" }, clock.t).p50FloorMs).toBeGreaterThanOrEqual(
      98.4,
    );
    // a degrade issues no branch: after a stall the old answers must not keep the set degraded
    clock.t += 2_001;
    expect(book.fanout(["c", "never-seen"], { kind: "all" }, clock.t).p50FloorMs).toBeUndefined();
    book.peerOf("c").record(100, clock.t);
    expect(book.fanout(["c", "never-seen"], { kind: "all" }, clock.t).p50FloorMs).toBeGreaterThanOrEqual(
      98.4,
    );
  });

  it("falls back to the set's own p50 floor when its known p50 is below a member's", () => {
    const clock = new ManualClock();
    const book = new LatencyBook({ fanoutTickMs: 0, minSamples: 10 }, clock);
    feed(book, "a", 20, 30, clock.t);
    feed(book, "c", 100, 5, clock.t); // thin: its floor is about 100 ms
    for (let i = 0; i < 30; i++) {
      const f = book.beginFanout(["a", "c"], { kind: "all" }, clock.t, clock.t + 1_000);
      f?.answered(clock.t + 20);
      f?.answered(clock.t + 20);
    }
    clock.t += 21;
    const e = book.fanout(["a", "c"], { kind: "all" }, clock.t);
    expect(e).toMatchObject({ status: "unknown", basis: "observed", p50Kind: "known" });
    expect(e.p50Ms).toBeLessThan(21);
    // the set's measured median stands against the member's floor, and bounds the floor it keeps
    expect(e.p50FloorMs).toBeGreaterThan(19);
    expect(e.p50FloorMs).toBeLessThanOrEqual(e.p50Ms);
  });

  it("gives the smallest completed sample count apart from the calls in flight", () => {
    const clock = new ManualClock();
    const book = new LatencyBook({ fanoutTickMs: 0 }, clock);
    feed(book, "a", 10, 30, clock.t);
    feed(book, "b", 10, 20, clock.t);
    for (let i = 0; i < 15; i++) book.begin("b", clock.t);
    const f = book.fanout(["a", "b"], { kind: "all" }, clock.t);
    expect(f).toMatchObject({ minSamples: 30, minCompletedSamples: 20 });
    expect(book.fanout(["a", "c"], { kind: "all" }, clock.t).minCompletedSamples).toBe(0);
  });

  it("caches within a tick and drops the entry when a member records, or the tick passes", () => {
    const clock = new ManualClock();
    const book = new LatencyBook({ fanoutTickMs: 5 }, clock);
    feed(book, "a", 10, 30, clock.t);
    feed(book, "b", 10, 30, clock.t);
    const first = book.fanout(["a", "b"], { kind: "all" }, clock.t);
    expect(book.fanout(["a", "b"], { kind: "all" }, clock.t + 4)).toBe(first);
    expect(book.fanout(["a", "b"], { kind: "quorum", k: 1 }, clock.t)).not.toBe(first);
    expect(book.fanout(["a", "b"], { kind: "all" }, clock.t + 5)).not.toBe(first);
    const again = book.fanout(["a", "b"], { kind: "all" }, clock.t + 5);
    feed(book, "b", 500, 30, clock.t + 5);
    const after = book.fanout(["a", "b"], { kind: "all" }, clock.t + 5);
    expect(after).not.toBe(again);
    expect(after.p99Ms).toBeGreaterThan(400);
  });

  it("serves a cached estimate only to the same set in the same order with the same requirement", () => {
    const clock = new ManualClock();
    const book = new LatencyBook({ fanoutTickMs: 5 }, clock);
    // the cache slot hashes an id's length and four of its characters: these two ids share a slot
    feed(book, "aXYbcd", 10, 30, clock.t);
    feed(book, "aZWbcd", 300, 30, clock.t);
    feed(book, "c", 20, 30, clock.t);
    const fast = book.fanout(["aXYbcd"], { kind: "all" }, clock.t);
    const slow = book.fanout(["aZWbcd"], { kind: "all" }, clock.t);
    expect(slow).not.toBe(fast);
    expect(slow.p50Ms).toBeGreaterThan(250);
    expect(book.fanout(["aXYbcd"], { kind: "all" }, clock.t).p50Ms).toBeLessThan(11);
    const ac = book.fanout(["aXYbcd", "c"], { kind: "quorum", k: 1 }, clock.t);
    expect(book.fanout(["aXYbcd", "c"], { kind: "quorum", k: 1 }, clock.t + 1)).toBe(ac);
    expect(book.fanout(["c", "aXYbcd"], { kind: "quorum", k: 1 }, clock.t + 1)).not.toBe(ac);
    expect(book.fanout(["aXYbcd", "c"], { kind: "quorum", k: 2 }, clock.t + 1)).not.toBe(ac);
    expect(book.fanout(["aXYbcd", "c"], { kind: "all" }, clock.t + 1)).not.toBe(ac);
  });

  it("sees a tail in progress through the censored calls of its members", () => {
    const clock = new ManualClock();
    const book = new LatencyBook({ fanoutTickMs: 0 }, clock);
    for (const p of ["a", "b", "c"]) feed(book, p, 10, 100, clock.t);
    const calm = book.fanout(["a", "b", "c"], { kind: "all" }, clock.t);
    expect(calm.p99Ms).toBeLessThan(11);
    for (let i = 0; i < 5; i++) book.begin("c", clock.t, clock.t + 1_000);
    clock.t += 300;
    const stalled = book.fanout(["a", "b", "c"], { kind: "all" }, clock.t);
    expect(stalled.p99Ms).toBeGreaterThanOrEqual(297);
    expect(stalled.p50Ms).toBeLessThan(11);
    expect(stalled.status).toBe("fresh");
  });

  it("an empty set is fresh at 0 ms; a bad quorum is an INVALID_ARGUMENT", () => {
    const book = new LatencyBook({}, new ManualClock());
    expect(book.fanout([], { kind: "all" }, 0)).toMatchObject({
      status: "fresh",
      p50Ms: 0,
      p99Ms: 0,
      size: 0,
    });
    let error: unknown;
    try {
      book.fanout(["a"], { kind: "quorum", k: 3 }, 0);
    } catch (e) {
      error = e;
    }
    expect(TailswarmError.is(error, "INVALID_ARGUMENT")).toBe(true);
  });
});
