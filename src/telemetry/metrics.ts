/**
 * Metrics of fan-outs (OpenTelemetry naming: `tailswarm.` prefix, UCUM units, no `_total`, no unit in
 * the name). Records through @opentelemetry/api only.
 *
 * Hot-path cost: a counter `add` with attributes costs 0.3–0.8 µs (attribute hashing), so counts are
 * kept in plain cells with pre-built attribute sets and exported through observable counters, read
 * only when a reader collects. Per-peer latency gauges read the estimator in their callback: nothing
 * per sample.
 *
 * The four histograms are recorded in batches: `onFanoutEnd` counts the fan-out in its cells at once
 * and queues the histograms' values (numbers in a preallocated array, the mode and the context), and
 * the queue is recorded when it holds BATCH fan-outs, when a reader collects (before anything is
 * observed), and on `close`. In a node the coordinator's code for one fan-out runs cold, among the gRPC
 * work of its branches; the SDK's record path was the most expensive part of that (~10 µs a fan-out in
 * profiles of the gRPC bench, docs/telemetry.md), and a batch runs it hot. The queue keeps nothing of
 * the outcome: holding outcomes ~100 ms would have the garbage collector promote them.
 */
import { context, metrics as otelMetrics, ValueType } from "@opentelemetry/api";
import type {
  Attributes,
  BatchObservableResult,
  Context,
  Histogram,
  Meter,
  Observable,
  ObservableCounter,
  ObservableGauge,
  ObservableResult,
  ObservableUpDownCounter,
} from "@opentelemetry/api";
import type { Clock } from "../clock/clock.js";
import { systemClock } from "../clock/clock.js";
import type { BranchRecord, FanoutObserver, FanoutOutcome } from "../engine/outcome.js";
import { ATTR, INSTRUMENTATION_SCOPE } from "./attributes.js";
import { PeerEstimateGauges } from "./peer-gauges.js";
import type { EstimateSource } from "./peer-gauges.js";
import { WindowedRatio } from "./windowed-ratio.js";

export interface FanoutMetricsOptions {
  /** Default: `metrics.getMeter("tailswarm")` (a no-op until an SDK registers a provider). */
  readonly meter?: Meter;
  /** The engine's clock (for the windowed ratios). Default: system clock. */
  readonly clock?: Clock;
  /** The estimator (src/estimate's LatencyBook fits): per-peer p50/p99/samples/age gauges. */
  readonly estimates?: EstimateSource;
  /** Window of the commit-ratio gauges, ms. Default 60 s. */
  readonly ratioWindowMs?: number;
}

/** Names of the instruments (docs/telemetry.md describes each). */
export const METRIC = {
  fanouts: "tailswarm.fanouts",
  branches: "tailswarm.branches",
  inFlight: "tailswarm.branches.in_flight",
  commitRatio: "tailswarm.branches.commit_ratio",
  relevantCommitRatio: "tailswarm.branches.decision_relevant_commit_ratio",
  lostWork: "tailswarm.abandon.lost_work",
  costEstimate: "tailswarm.abandon.cost_estimate",
  informationGain: "tailswarm.information_gain",
  budget: "tailswarm.fanout.budget",
  duration: "tailswarm.fanout.duration",
  violations: "tailswarm.budget_violations",
  deadlineMisses: "tailswarm.deadline_misses",
  horizonProbes: "tailswarm.horizon_probes",
} as const;

/** Fan-outs whose histogram values are queued before they are recorded (see the file comment). */
const BATCH = 64;
/** Queued values per fan-out: budget, abandon cost estimate, duration, information gain (NaN: none). */
const VALUES = 4;

/** Histogram buckets in ms: fan-out budgets and latencies span 1 ms to tens of seconds. */
const MS_BUCKETS = [1, 2, 5, 10, 20, 50, 100, 200, 300, 500, 750, 1000, 2000, 5000, 10000, 30000];
const BIT_BUCKETS = [0, 0.01, 0.05, 0.1, 0.2, 0.5, 1, 2, 4];

interface Cell {
  readonly attrs: Attributes;
  value: number;
}

/** A set of counts keyed by a string, each with its attribute set built once. */
class Cells {
  readonly #cells = new Map<string, Cell>();

  add(key: string, make: () => Attributes, delta: number): void {
    let c = this.#cells.get(key);
    if (c === undefined) {
      c = { attrs: Object.freeze(make()), value: 0 };
      this.#cells.set(key, c);
    }
    c.value += delta;
  }

  observe(result: ObservableResult | BatchObservableResult, instrument?: Observable): void {
    for (const c of this.#cells.values()) {
      if (instrument === undefined) (result as ObservableResult).observe(c.value, c.attrs);
      else (result as BatchObservableResult).observe(instrument, c.value, c.attrs);
    }
  }
}

const MODES = ["speculate", "synchronous", "degrade"] as const;
const OUTCOMES = ["committed", "partial", "abandoned", "late", "failed"] as const;

function branchAttrs(mode: string, outcome: string, relevant: boolean): Attributes {
  return Object.freeze({
    [ATTR.mode]: mode,
    [ATTR.branchOutcome]: outcome,
    [ATTR.decisionRelevant]: relevant,
  });
}

/**
 * Branch counts by (mode, outcome, decision relevance): a fixed table indexed by small integers, so
 * that counting a branch builds no key string and hashes nothing. A mode outside the table (a future
 * one) falls back to keyed cells.
 */
class BranchCells {
  readonly #cells: (Cell | undefined)[] = new Array<Cell | undefined>(
    MODES.length * OUTCOMES.length * 2,
  ).fill(undefined);
  readonly #other = new Cells();

  add(mode: string, outcome: string, relevant: boolean): void {
    const m = MODES.indexOf(mode as (typeof MODES)[number]);
    const o = OUTCOMES.indexOf(outcome as (typeof OUTCOMES)[number]);
    if (m < 0 || o < 0) {
      this.#other.add(
        `${mode}\0${outcome}\0${relevant ? 1 : 0}`,
        () => branchAttrs(mode, outcome, relevant),
        1,
      );
      return;
    }
    const i = (m * OUTCOMES.length + o) * 2 + (relevant ? 1 : 0);
    const c = this.#cells[i];
    if (c === undefined) this.#cells[i] = { attrs: branchAttrs(mode, outcome, relevant), value: 1 };
    else c.value++;
  }

  observe(result: BatchObservableResult, instrument: Observable): void {
    for (const c of this.#cells) if (c !== undefined) result.observe(instrument, c.value, c.attrs);
    this.#other.observe(result, instrument);
  }
}

/**
 * A `FanoutObserver` that records the metrics of each fan-out when it ends, plus in-flight branches
 * (through `instrumentTransport`) and the per-peer estimate gauges.
 *
 * @example
 * const m = new FanoutMetrics({ estimates: latencyBook });
 * const coordinator = new Coordinator({ transport: instrumentTransport(t, { metrics: m }), observer: m });
 */
export class FanoutMetrics implements FanoutObserver {
  readonly #clock: Clock;
  readonly #fanouts = new Cells();
  readonly #branches = new BranchCells();
  readonly #lostWork = new Cells();
  readonly #violations = new Cells();
  readonly #misses = new Cells();
  readonly #probes = new Cells();
  readonly #commit: WindowedRatio;
  readonly #relevant: WindowedRatio;
  readonly #modeAttrs = new Map<string, Attributes>();
  #inFlight = 0;
  /** Histogram values of the fan-outs not yet recorded (VALUES each), their modes and contexts. */
  readonly #queued = new Float64Array(BATCH * VALUES);
  readonly #queuedMode: string[] = [];
  readonly #queuedIn: Context[] = [];

  readonly #budget: Histogram;
  readonly #duration: Histogram;
  readonly #costEstimate: Histogram;
  readonly #infoGain: Histogram;
  readonly #observables: Observable[];
  readonly #batch: (r: BatchObservableResult) => void;
  readonly #meter: Meter;
  readonly #peers: PeerEstimateGauges;

  constructor(options: FanoutMetricsOptions = {}) {
    const meter = options.meter ?? otelMetrics.getMeter(INSTRUMENTATION_SCOPE);
    this.#meter = meter;
    this.#clock = options.clock ?? systemClock;
    const windowMs = options.ratioWindowMs ?? 60_000;
    this.#commit = new WindowedRatio(windowMs, 60);
    this.#relevant = new WindowedRatio(windowMs, 60);

    const ms = (name: string, description: string): Histogram =>
      meter.createHistogram(name, {
        description,
        unit: "ms",
        advice: { explicitBucketBoundaries: MS_BUCKETS },
      });
    this.#budget = ms(METRIC.budget, "Remaining budget of each fan-out when it was classified");
    this.#duration = ms(METRIC.duration, "Time from the start of a fan-out to its decision");
    this.#costEstimate = ms(METRIC.costEstimate, "Abandon cost estimate used by the classification");
    this.#infoGain = meter.createHistogram(METRIC.informationGain, {
      description:
        "Information gain per committed or partial branch, one observation per fan-out with answers",
      unit: "bit",
      advice: { explicitBucketBoundaries: BIT_BUCKETS },
    });

    /** An integer count, read from the fixed cells at collection. */
    const count = (name: string, description: string, unit: string): ObservableCounter =>
      meter.createObservableCounter(name, { description, unit, valueType: ValueType.INT });
    const fanouts = count(METRIC.fanouts, "Fan-outs by mode and reason", "{fanout}");
    const branches = count(
      METRIC.branches,
      "Branches by outcome, fan-out mode and decision relevance (leave-one-out)",
      "{branch}",
    );
    const lostWork: ObservableCounter = meter.createObservableCounter(METRIC.lostWork, {
      description: "Peer work lost to abandoned and late branches",
      unit: "ms",
    });
    const violations = count(
      METRIC.violations,
      "SpeculationBudgetViolations (budget <= 0, p99 < p50) turned into degrade",
      "{violation}",
    );
    const misses = count(
      METRIC.deadlineMisses,
      "Fan-outs whose decision came after their deadline",
      "{fanout}",
    );
    const probes = count(
      METRIC.horizonProbes,
      "Horizon probes (cut branches left running to learn the tail) by state: issued, completed, expired",
      "{branch}",
    );
    const inFlight: ObservableUpDownCounter = meter.createObservableUpDownCounter(METRIC.inFlight, {
      description: "Branches sent and not yet settled",
      unit: "{branch}",
      valueType: ValueType.INT,
    });
    const commitRatio: ObservableGauge = meter.createObservableGauge(METRIC.commitRatio, {
      description: "Committed branches / all branches, over a sliding window",
      unit: "1",
    });
    const relevantRatio: ObservableGauge = meter.createObservableGauge(METRIC.relevantCommitRatio, {
      description: "Decision-relevant answers / used answers (committed or partial), over a sliding window",
      unit: "1",
    });
    this.#observables = [
      fanouts,
      branches,
      lostWork,
      violations,
      misses,
      probes,
      inFlight,
      commitRatio,
      relevantRatio,
    ];
    this.#batch = (r) => {
      this.#record();
      this.#fanouts.observe(r, fanouts);
      this.#branches.observe(r, branches);
      this.#lostWork.observe(r, lostWork);
      this.#violations.observe(r, violations);
      this.#misses.observe(r, misses);
      this.#probes.observe(r, probes);
      r.observe(inFlight, this.#inFlight);
      const now = this.#clock.now();
      const c = this.#commit.ratio(now);
      if (Number.isFinite(c)) r.observe(commitRatio, c);
      const d = this.#relevant.ratio(now);
      if (Number.isFinite(d)) r.observe(relevantRatio, d);
    };
    meter.addBatchObservableCallback(this.#batch, this.#observables);
    this.#peers = new PeerEstimateGauges(meter, this.#clock, options.estimates);
  }

  /** Points the per-peer gauges at an estimator (for a node that creates it after telemetry). */
  setEstimateSource(source: EstimateSource | undefined): void {
    this.#peers.setSource(source);
  }

  /** A branch was sent (called by `instrumentTransport`). */
  branchStarted(): void {
    this.#inFlight++;
  }

  /** A branch settled, whatever its end (called by `instrumentTransport`). */
  branchSettled(): void {
    this.#inFlight--;
  }

  /** Peer work lost, from settled branch reports (an abandoned branch's report may come late). */
  onBranchEnd(_fanoutId: string, b: BranchRecord): void {
    if (b.unsettled === true) return;
    if (b.probe === true) this.#probe(b.result.kind === "answer" ? "completed" : "expired");
    if (!(b.lostWorkMs > 0)) return;
    const out = b.outcome;
    this.#lostWork.add(out, () => ({ [ATTR.branchOutcome]: out }), b.lostWorkMs);
  }

  #probe(state: "issued" | "completed" | "expired"): void {
    this.#probes.add(state, () => ({ [ATTR.probeState]: state }), 1);
  }

  /** Budget violations, whether turned into degrade or thrown to the caller. */
  onViolation(_fanoutId: string, violation: Error): void {
    const c = (violation as { code?: unknown }).code;
    const code = typeof c === "string" ? c : violation.name;
    this.#violations.add(code, () => ({ [ATTR.violationCode]: code }), 1);
  }

  /** Counts the fan-out, and queues its histogram values (see the file comment). */
  onFanoutEnd(o: FanoutOutcome): void {
    const c = o.classification;
    const mode = c.mode;
    this.#fanouts.add(`${mode}\0${c.reason}`, () => ({ [ATTR.mode]: mode, [ATTR.reason]: c.reason }), 1);
    let committed = 0;
    let used = 0;
    let relevant = 0;
    for (const b of o.branches) {
      const out = b.outcome;
      if (b.probe === true) this.#probe("issued");
      this.#branches.add(mode, out, b.decisionRelevant);
      if (out === "committed") committed++;
      if (out === "committed" || out === "partial") {
        used++;
        if (b.decisionRelevant) relevant++;
      }
    }
    const now = this.#clock.now();
    if (o.branches.length > 0) this.#commit.add(now, committed, o.branches.length);
    if (used > 0) this.#relevant.add(now, relevant, used);
    if (o.deadlineMissed) this.#misses.add(mode, () => this.#attrsOf(mode), 1);

    const i = this.#queuedMode.length * VALUES;
    const q = this.#queued;
    q[i] = Number.isFinite(c.budgetMs) ? Math.max(0, c.budgetMs) : NaN;
    q[i + 1] = Number.isFinite(c.abandonCostMs) ? Math.max(0, c.abandonCostMs) : NaN;
    q[i + 2] = Math.max(0, o.elapsedMs);
    const gain = o.infoGainPerCommitted;
    q[i + 3] = gain !== null && Number.isFinite(gain) ? Math.max(0, gain) : NaN;
    this.#queuedMode.push(mode);
    // The records take the context the fan-out ended in, as they would have then (exemplars).
    this.#queuedIn.push(context.active());
    if (this.#queuedMode.length === BATCH) this.#record();
  }

  /** Records the queued histogram values. */
  #record(): void {
    const q = this.#queued;
    const n = this.#queuedMode.length;
    for (let k = 0; k < n; k++) {
      const attrs = this.#attrsOf(this.#queuedMode[k]!);
      const ctx = this.#queuedIn[k]!;
      const i = k * VALUES;
      if (!Number.isNaN(q[i]!)) this.#budget.record(q[i]!, attrs, ctx);
      if (!Number.isNaN(q[i + 1]!)) this.#costEstimate.record(q[i + 1]!, attrs, ctx);
      this.#duration.record(q[i + 2]!, attrs, ctx);
      if (!Number.isNaN(q[i + 3]!)) this.#infoGain.record(q[i + 3]!, attrs, ctx);
    }
    this.#queuedMode.length = 0;
    this.#queuedIn.length = 0;
  }

  /** Records what is queued and stops the observable callbacks (the instruments stay registered). */
  close(): void {
    this.#record();
    this.#meter.removeBatchObservableCallback(this.#batch, this.#observables);
    this.#peers.close();
  }

  #attrsOf(mode: string): Attributes {
    let a = this.#modeAttrs.get(mode);
    if (a === undefined) {
      a = Object.freeze({ [ATTR.mode]: mode });
      this.#modeAttrs.set(mode, a);
    }
    return a;
  }
}
