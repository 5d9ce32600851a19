/**
 * The estimate figures: record one sample; the decision path (fan-out estimate of steps 4 and
 * classification of step 7) for 8, 40 and 200 required peers, cached and uncached, and at 1,000 (cached;
 * 501 of 1,000 uncached); memory per tracked
 * peer and for 1,000 peers. Run with `npm run bench -- estimate` (or `tsx bench/estimate.bench.ts`).
 */
import { build } from "hdr-histogram-js";
import { loadavg } from "node:os";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { pathToFileURL } from "node:url";
import { LatencyBook } from "../src/estimate/latency-book.js";
import { fanoutQuantiles } from "../src/estimate/fanout.js";
import type { CdfLike, QuantileHint } from "../src/estimate/fanout.js";
import type { PeerLatency } from "../src/estimate/peer-latency.js";
import type { FanoutEstimate, Requirement } from "../src/estimate/types.js";
import { decide } from "../src/policy/decide.js";
import { createRng, logNormal } from "../src/util/rng.js";
import { recordFigures } from "./report.js";
import type { Figure } from "./report.js";

const ALL: Requirement = { kind: "all" };
let sink = 0;

/** A clock the bench moves by hand. */
const clock = {
  t: 1_000_000,
  now(): number {
    return this.t;
  },
  setTimer(): { cancel(): void } {
    throw new Error("not used");
  },
};

function nsPerOp(iterations: number, fn: (i: number) => void): number {
  const start = process.hrtime.bigint();
  for (let i = 0; i < iterations; i++) fn(i);
  return Number(process.hrtime.bigint() - start) / iterations;
}

/** Per-call latency distribution (ns, includes ≈ 40–80 ns of hrtime overhead): p50, p99. */
function perCall(iterations: number, fn: (i: number) => void): { p50: number; p99: number } {
  const h = build({ numberOfSignificantValueDigits: 2 });
  for (let i = 0; i < iterations; i++) {
    const start = process.hrtime.bigint();
    fn(i);
    h.recordValue(Number(process.hrtime.bigint() - start));
  }
  return { p50: h.getValueAtPercentile(50), p99: h.getValueAtPercentile(99) };
}

/** `name (p99)` and `name (p50)` of a `perCall` distribution, in µs. */
function perCallFigures(
  figures: Record<string, Figure>,
  name: string,
  d: { p50: number; p99: number },
): void {
  figures[`${name} (p99)`] = { value: d.p99 / 1000, unit: "µs" };
  figures[`${name} (p50)`] = { value: d.p50 / 1000, unit: "µs" };
}

/**
 * Mean cost per call of the best of `batches` batches: on a shared, preempted machine the best batch is the
 * closest to the code's own CPU cost (a batch that was descheduled only ever looks slower).
 */
function bestBatchMean(batches: number, size: number, fn: (i: number) => void): number {
  let best = Infinity;
  for (let b = 0; b < batches; b++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < size; i++) fn(b * size + i);
    best = Math.min(best, Number(process.hrtime.bigint() - start) / size);
  }
  return best;
}

/**
 * Heap bytes allocated per call: the median over `batches` batches of `size` calls of the growth of the
 * heap's use (a batch during which a collection ran shrinks it and is left out).
 */
function allocatedPerCall(batches: number, size: number, fn: () => void): number {
  const grown: number[] = [];
  for (let b = 0; b < batches; b++) {
    const before = process.memoryUsage().heapUsed;
    for (let i = 0; i < size; i++) fn();
    const delta = process.memoryUsage().heapUsed - before;
    if (delta >= 0) grown.push(delta / size);
  }
  grown.sort((x, y) => x - y);
  return grown[grown.length >> 1] ?? NaN;
}

/**
 * A book with `n` peers of heterogeneous log-normal latency, 1,000 samples each, 50 calls abandoned at
 * assorted ages (censored ends: the worst case for memory, their window's arrays allocated) and 4 calls in
 * flight each.
 */
function populatedBook(n: number, seed: number, tickMs = 1): { book: LatencyBook; ids: string[] } {
  const rng = createRng(seed);
  const book = new LatencyBook({ windowMs: 60_000, fanoutTickMs: tickMs }, clock);
  const ids = Array.from({ length: n }, (_, i) => `peer-${i.toString().padStart(4, "0")}`);
  for (const id of ids) {
    const median = 5 + rng() * 40;
    const sigma = 0.3 + rng() * 0.7;
    for (let i = 0; i < 1_000; i++) book.record(id, logNormal(rng, median, sigma), clock.t - rng() * 5_000);
    const peer = book.peerOf(id);
    for (let i = 0; i < 50; i++) peer.recordCensored(rng() * 3 * median, clock.t - rng() * 5_000);
    for (let i = 0; i < 4; i++) book.begin(id, clock.t - rng() * 50, clock.t + 1_000);
  }
  return { book, ids };
}

function estimateAndDecide(book: LatencyBook, ids: readonly string[], now: number): FanoutEstimate {
  const f = book.fanout(ids, ALL, now);
  const c = decide({
    policy: "p99-boundary",
    budgetMs: 250,
    estimate: f,
    abandonCostMs: 5,
    relevant: true,
    speculationFeasible: true,
    anyPeerLive: true,
    hasFallback: true,
  });
  sink += c.fanoutP99Ms;
  return f;
}

/** A reference point on this machine: one raw hdr-histogram-js JS-mode recordValue, what a plain HDR histogram pays per sample. */
function benchReference(figures: Record<string, Figure>): void {
  const h = build({
    bitBucketSize: 32,
    numberOfSignificantValueDigits: 2,
    lowestDiscernibleValue: 1,
    highestTrackableValue: 60e6,
    autoResize: false,
    useWebAssembly: false,
  });
  const rng = createRng(9);
  const values = Float64Array.from({ length: 4096 }, () => Math.round(logNormal(rng, 20_000, 0.8)));
  nsPerOp(200_000, (i) => h.recordValue(values[i & 4095] as number));
  figures["reference: raw hdr-histogram-js recordValue"] = {
    value: nsPerOp(2_000_000, (i) => h.recordValue(values[i & 4095] as number)),
    unit: "ns",
  };
  figures["reference: 1-minute load average (machine has 2 cores)"] = {
    value: loadavg()[0] ?? NaN,
    unit: "",
  };
}

function benchRecord(figures: Record<string, Figure>): void {
  const book = new LatencyBook({}, clock);
  const peer: PeerLatency = book.peerOf("p");
  const rng = createRng(1);
  const values = Float64Array.from({ length: 4096 }, () => logNormal(rng, 20, 0.8));
  const n = 3_000_000;
  const t0 = clock.t;
  // warm up, then measure; clock advances 10 µs per sample so slice rotations are included
  nsPerOp(200_000, (i) => peer.record(values[i & 4095] as number, t0 + i * 0.01));
  const direct = nsPerOp(n, (i) => peer.record(values[i & 4095] as number, t0 + 2_000 + i * 0.01));
  const viaBook = nsPerOp(n, (i) => book.record("p", values[i & 4095] as number, t0 + 40_000 + i * 0.01));
  const call = nsPerOp(1_000_000, (i) => book.begin("p", t0 + 80_000 + i * 0.01).complete(values[i & 4095]));
  const censoredEnd = bestBatchMean(50, 20_000, (i) =>
    peer.recordCensored(values[i & 4095] as number, t0 + 120_000 + i * 0.01),
  );
  const abandonedCall = nsPerOp(1_000_000, (i) =>
    book.begin("p", t0 + 160_000 + i * 0.01).abandoned(values[i & 4095]),
  );
  figures["record one censored end (PeerLatency.recordCensored, best batch mean)"] = {
    value: censoredEnd,
    unit: "ns",
  };
  figures["begin + abandoned one call"] = { value: abandonedCall, unit: "ns" };
  figures["record one sample (PeerLatency.record)"] = { value: direct, unit: "ns", target: 100 };
  figures["record one sample (PeerLatency.record, best batch mean)"] = {
    value: bestBatchMean(50, 20_000, (i) => peer.record(values[i & 4095] as number, t0 + 3_000 + i * 0.01)),
    unit: "ns",
  };
  figures["record one sample (LatencyBook.record, map lookup)"] = { value: viaBook, unit: "ns", target: 100 };
  figures["begin + complete one call"] = { value: call, unit: "ns" };
}

function benchDecision(figures: Record<string, Figure>): void {
  for (const n of [8, 40, 200]) {
    const { book, ids } = populatedBook(n, 100 + n);
    const now = clock.t;
    estimateAndDecide(book, ids, now); // fill the cache
    const cached = perCall(200_000, () => estimateAndDecide(book, ids, now));
    figures[`decision path cached, ${n} peers (p99)`] = {
      value: cached.p99 / 1000,
      unit: "µs",
      ...(n === 40 ? { target: 10 } : {}),
    };
    figures[`decision path cached, ${n} peers (p50)`] = { value: cached.p50 / 1000, unit: "µs" };

    // cache miss (tick expired), per-peer CDFs rebuilt for the censored calls' new ages
    let t = now;
    const miss = perCall(n === 200 ? 2_000 : 5_000, () => estimateAndDecide(book, ids, (t += 1.01)));
    figures[`decision path uncached, ${n} peers (p99)`] = {
      value: miss.p99 / 1000,
      unit: "µs",
      ...(n === 200 ? { target: 1000 } : {}),
    };
    figures[`decision path uncached, ${n} peers (p50)`] = { value: miss.p50 / 1000, unit: "µs" };
    figures[`decision path uncached, ${n} peers (best batch mean)`] = {
      value: bestBatchMean(20, 10, () => estimateAndDecide(book, ids, (t += 1.01))) / 1000,
      unit: "µs",
    };

    // cold: every member recorded since the last decision (window regrouped, CDF rebuilt for all)
    const rng = createRng(n);
    const coldRuns = n === 200 ? 1_000 : 3_000;
    const h = build({ numberOfSignificantValueDigits: 2 });
    for (let r = 0; r < coldRuns; r++) {
      t += 1.01;
      for (const id of ids) book.record(id, logNormal(rng, 20, 0.5), t);
      const start = process.hrtime.bigint();
      estimateAndDecide(book, ids, t);
      h.recordValue(Number(process.hrtime.bigint() - start));
    }
    figures[`decision path cold (every member recorded), ${n} peers (p99)`] = {
      value: h.getValueAtPercentile(99) / 1000,
      unit: "µs",
      ...(n === 200 ? { target: 1000 } : {}),
    };
    if (n === 200) {
      const majority: Requirement = { kind: "quorum", k: 101 };
      const q = perCall(500, () => {
        t += 1.01;
        sink += book.fanout(ids, majority, t).p99Ms;
      });
      figures["fan-out uncached, quorum 101 of 200 (p99)"] = { value: q.p99 / 1000, unit: "µs" };
    }
  }
}

/**
 * The decision path at swarm scale: 1,000 required peers cached, and 501 of 1,000 uncached. Each uncached
 * figure is the wall time of one `LatencyBook.fanout`: every member's CDF rebuilt (its calls in flight aged
 * 1.01 ms) and the quantile search; the search starts from the set's previous estimate (an expired cache
 * entry), except in the "first estimate" figure (cache off, a whole-span search). The "search alone" figure
 * times `fanoutQuantiles` only, on the same members brought up to date (timed apart: "members brought up
 * to date alone", each member's `refresh` and `cdf`). As any benchmark harness does, the code is warmed
 * first (300 estimates of a twin book, untimed) and the heap settled (a full GC) after the timed book is
 * filled, so the figures time the code, not the JIT compiling it nor the scavenges promoting the freshly
 * filled book; the timed book's own data are untouched (its calls in flight still age and pass ended
 * points, as a node's young calls do). On a shared machine the p99 also holds preemption and the GC the
 * estimates' own allocation causes; the best batch mean is the closest to the code's own cost. "Heap
 * allocated per uncached estimate" is what causes that GC (`allocatedPerCall`).
 */
function benchScale(figures: Record<string, Figure>): void {
  const majority: Requirement = { kind: "quorum", k: 501 };
  const twin = populatedBook(1_000, 999);
  let t = clock.t;
  for (let i = 0; i < 300; i++) sink += twin.book.fanout(twin.ids, majority, (t += 1.01)).p99Ms;
  const { book, ids } = populatedBook(1_000, 1_000);
  settleHeap();
  const now = clock.t;
  estimateAndDecide(book, ids, now);
  const cached = perCall(50_000, () => estimateAndDecide(book, ids, now));
  figures["decision path cached, 1,000 peers (p99)"] = { value: cached.p99 / 1000, unit: "µs", target: 50 };
  figures["decision path cached, 1,000 peers (p50)"] = { value: cached.p50 / 1000, unit: "µs" };
  // members' CDF refreshes, summed over the set: how many estimates rebuild whole and how many move in place
  const refreshes = (): { rebuilds: number; moves: number } => {
    let rebuilds = 0;
    let moves = 0;
    for (const id of ids) {
      const s = book.peerOf(id).cdfStats;
      rebuilds += s.rebuilds;
      moves += s.moves;
    }
    return { rebuilds, moves };
  };
  const perEstimate = (label: string, from: { rebuilds: number; moves: number }, n: number): void => {
    const to = refreshes();
    figures[`members rebuilt whole per estimate, quorum 501 of 1,000, ${label}`] = {
      value: (to.rebuilds - from.rebuilds) / n,
      unit: "members",
    };
    figures[`members moved in place per estimate, quorum 501 of 1,000, ${label}`] = {
      value: (to.moves - from.moves) / n,
      unit: "members",
    };
  };
  t = now;
  const fromStart = refreshes();
  const q = perCall(300, () => {
    t += 1.01;
    sink += book.fanout(ids, majority, t).p99Ms;
  });
  figures["fan-out uncached, quorum 501 of 1,000 (p99)"] = { value: q.p99 / 1000, unit: "µs", target: 2000 };
  figures["fan-out uncached, quorum 501 of 1,000 (p50)"] = { value: q.p50 / 1000, unit: "µs" };
  figures["fan-out uncached, quorum 501 of 1,000 (best batch mean)"] = {
    value:
      bestBatchMean(30, 10, () => {
        t += 1.01;
        sink += book.fanout(ids, majority, t).p99Ms;
      }) / 1000,
    unit: "µs",
  };
  perEstimate("estimates 1–600", fromStart, 600);
  // the same set later on (estimates 601 to 900): its calls in flight have aged past the ended points,
  // so members are moved, not rebuilt whole — the first 300 hold both
  const second = refreshes();
  const later = perCall(300, () => {
    t += 1.01;
    sink += book.fanout(ids, majority, t).p99Ms;
  });
  perEstimate("estimates 601–900", second, 300);
  perCallFigures(figures, "fan-out uncached, quorum 501 of 1,000, estimates 601–900", later);
  figures["heap allocated per uncached estimate, quorum 501 of 1,000"] = {
    value: allocatedPerCall(30, 10, () => {
      t += 1.01;
      sink += book.fanout(ids, majority, t).p99Ms;
    }),
    unit: "B",
  };
  // the quantile search alone: the members' CDFs rebuilt as above (untimed), then `fanoutQuantiles` from
  // the last estimate, as `LatencyBook.fanout` does; the rest of the uncached figure is the rebuild
  const members = ids.map((id) => book.peerOf(id));
  const cdfs: CdfLike[] = [];
  let hint: QuantileHint = book.fanout(ids, majority, (t += 1.01));
  const h = build({ numberOfSignificantValueDigits: 2 });
  const refresh = build({ numberOfSignificantValueDigits: 2 });
  for (let i = 0; i < 300; i++) {
    t += 1.01;
    cdfs.length = 0;
    const before = process.hrtime.bigint();
    for (const p of members) {
      p.refresh(t);
      cdfs.push(p.cdf(t));
    }
    const start = process.hrtime.bigint();
    refresh.recordValue(Number(start - before));
    hint = fanoutQuantiles(cdfs, majority, hint);
    h.recordValue(Number(process.hrtime.bigint() - start));
    sink += hint.p99Ms;
  }
  for (const [name, hist] of [
    ["quantile search alone, quorum 501 of 1,000", h],
    ["members brought up to date alone, 1,000", refresh],
  ] as const) {
    for (const q of [99, 50])
      figures[`${name} (p${q})`] = { value: hist.getValueAtPercentile(q) / 1000, unit: "µs" };
  }
  const cold = populatedBook(1_000, 1_000, 0);
  settleHeap();
  const first = perCall(300, () => {
    t += 1.01;
    sink += cold.book.fanout(cold.ids, majority, t).p99Ms;
  });
  perCallFigures(figures, "fan-out uncached, quorum 501 of 1,000, first estimate of the set", first);
}

/** A full garbage collection, twice (what survives the first is promoted by it, then collected). */
function settleHeap(): void {
  setFlagsFromString("--expose-gc");
  const gc = runInNewContext("gc") as () => void;
  gc();
  gc();
}

/**
 * A book with `n` peers in the state that holds the most the defaults allow: the samples' and the ends'
 * rings full (`maxSamplesPerPeer` each), the ends spread over the whole trackable range (every ended
 * point the CDF merges in use) and `maxInFlightPerPeer` calls in flight.
 */
function worstCaseBook(n: number, seed: number): LatencyBook {
  const rng = createRng(seed);
  const book = new LatencyBook({ windowMs: 60_000 }, clock);
  const { maxSamplesPerPeer, maxInFlightPerPeer, highestTrackableMs } = book.options;
  const logUniform = (): number => Math.exp(Math.log(0.001) + rng() * Math.log(highestTrackableMs / 0.001));
  for (let p = 0; p < n; p++) {
    const id = `peer-${p.toString().padStart(4, "0")}`;
    for (let i = 0; i < maxSamplesPerPeer; i++) book.record(id, logUniform(), clock.t - rng() * 5_000);
    const peer = book.peerOf(id);
    for (let i = 0; i < maxSamplesPerPeer; i++) peer.recordCensored(logUniform(), clock.t - rng() * 5_000);
    for (let i = 0; i < maxInFlightPerPeer; i++) book.begin(id, clock.t - rng() * 5_000, clock.t + 1_000);
  }
  return book;
}

/** Heap (and ArrayBuffer) bytes per peer that `build` adds, after a full collection, and the book's own count. */
function memoryOf(n: number, build: () => LatencyBook): { measured: number; counted: number } {
  const used = (): number => {
    settleHeap();
    const m = process.memoryUsage();
    return m.heapUsed + m.arrayBuffers;
  };
  const before = used();
  const book = build();
  for (const id of book.peers()) book.estimate(id, clock.t); // materialise every peer's CDF
  const total = used() - before;
  sink += book.peers().length;
  return { measured: total / n, counted: book.estimatedFootprintInBytes / n };
}

function benchMemory(figures: Record<string, Figure>): void {
  const bench = memoryOf(1_000, () => populatedBook(1_000, 7).book);
  figures["memory per tracked peer (measured heap + buffers)"] = {
    value: bench.measured / 1024,
    unit: "KiB",
    target: 16,
  };
  figures["memory per tracked peer counted by estimatedFootprintInBytes"] = {
    value: bench.counted / 1024,
    unit: "KiB",
    note: "elements, views, buffers and objects as built (src/estimate/footprint.ts); the measured figure is the one to hold to 16",
  };
  figures["memory for 1,000 tracked peers"] = {
    value: (bench.measured * 1000) / 1024 / 1024,
    unit: "MiB",
    target: 16,
  };
  const worst = memoryOf(1_000, () => worstCaseBook(1_000, 8));
  figures["memory per tracked peer, worst case (measured heap + buffers)"] = {
    value: worst.measured / 1024,
    unit: "KiB",
    target: 16,
    note: "both rings full, ends over the whole range, maxInFlightPerPeer calls in flight",
  };
  figures["memory per tracked peer, worst case, counted by estimatedFootprintInBytes"] = {
    value: worst.counted / 1024,
    unit: "KiB",
  };
  figures["memory for 1,000 tracked peers, worst case"] = {
    value: (worst.measured * 1000) / 1024 / 1024,
    unit: "MiB",
    target: 16,
  };
}

/**
 * An unknown estimate of 1,000 members, uncached: every one needed and one never seen, so the estimate
 * reads each member's p50 floor (`LatencyBook.fanout`'s p50Floor) on top of the quantile search. Warmed on
 * a twin book first, as `benchScale`.
 */
function benchUnknownScale(figures: Record<string, Figure>): void {
  const twin = populatedBook(1_000, 997);
  const twinIds = [...twin.ids, "never-seen"];
  let t = clock.t;
  for (let i = 0; i < 100; i++) sink += twin.book.fanout(twinIds, ALL, (t += 1.01)).p50FloorMs ?? 0;
  const { book, ids } = populatedBook(1_000, 998);
  const unknown = [...ids, "never-seen"];
  settleHeap();
  t = clock.t;
  const d = perCall(200, () => {
    sink += book.fanout(unknown, ALL, (t += 1.01)).p50FloorMs ?? 0;
  });
  perCallFigures(figures, "fan-out uncached, unknown all of 1,000", d);
}

export function run(): void {
  const figures: Record<string, Figure> = {};
  benchReference(figures);
  benchRecord(figures);
  benchDecision(figures);
  benchScale(figures);
  benchUnknownScale(figures);
  benchMemory(figures);
  recordFigures("estimate", figures);
  if (sink === 42) console.log("");
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) run();
