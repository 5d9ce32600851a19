/**
 * Metrics of fan-outs and their branches (OpenTelemetry naming: `tailswarm.fanout.*` for what is
 * decided per fan-out, `tailswarm.branch.*` for what happens per branch; durations in seconds; no
 * `_total` and no unit in a name). Records through @opentelemetry/api only.
 *
 * The hot path stays off the SDK: counts are kept in cells (cells.ts) and exported through observable
 * counters; the per-peer estimate gauges read the estimator when a reader collects; histogram values
 * are queued (numbers in a preallocated array, the mode and the context the fan-out ended in) and
 * recorded in batches — when the queue is full, before a reader collects, and on `close` — so that the
 * SDK's record path runs hot rather than once per fan-out among the gRPC work of its branches. The
 * queue keeps nothing of the outcome, so nothing lives long enough to be promoted by the collector.
 */
import { context, metrics as otelMetrics, ValueType } from "@opentelemetry/api";
import type {
  Attributes,
  BatchObservableResult,
  Context,
  Histogram,
  Meter,
  Observable,
  ObservableGauge,
} from "@opentelemetry/api";
import type { Clock } from "../clock/clock.js";
import { systemClock } from "../clock/clock.js";
import { answeredByNone } from "../engine/outcome.js";
import type { BranchRecord, FanoutObserver, FanoutOutcome } from "../engine/outcome.js";
import { ATTR, INSTRUMENTATION_SCOPE } from "./attributes.js";
import { BranchDurations, SECONDS_BUCKETS } from "./branch-durations.js";
import { BranchCells, Cells } from "./cells.js";
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
  /** Window of the ratio gauges, ms. Default 60 s. */
  readonly ratioWindowMs?: number;
}

/** Names of the instruments (docs/telemetry.md describes each). */
export const METRIC = {
  decisions: "tailswarm.fanout.decisions",
  committed: "tailswarm.fanout.committed",
  relevantCommitRatio: "tailswarm.fanout.decision_relevant_commit_ratio",
  budget: "tailswarm.fanout.budget",
  duration: "tailswarm.fanout.duration",
  costEstimate: "tailswarm.fanout.abandon_cost_estimate",
  informationGain: "tailswarm.fanout.information_gain",
  violations: "tailswarm.fanout.violations",
  deadlineMisses: "tailswarm.fanout.deadline_misses",
  noAnswer: "tailswarm.fanout.no_answer",
  outcomes: "tailswarm.branch.outcomes",
  inFlight: "tailswarm.branch.in_flight",
  commitRatio: "tailswarm.branch.commit_ratio",
  pivotalCommitRatio: "tailswarm.branch.pivotal_commit_ratio",
  lostWork: "tailswarm.branch.lost_work",
  horizonProbes: "tailswarm.branch.horizon_probes",
} as const;

/** Fan-outs whose histogram values are queued before they are recorded (see the file comment). */
const BATCH = 64;
/** Queued values per fan-out: budget, abandon cost estimate, duration (s), information gain (NaN: none). */
const VALUES = 4;

const BIT_BUCKETS = [0, 0.01, 0.05, 0.1, 0.2, 0.5, 1, 2, 4];

/** The attribute sets of the counts (cells.ts), built once per cell. */
function decisionAttrs(mode: string, reason: string): Attributes {
  return { [ATTR.mode]: mode, [ATTR.reason]: reason };
}

function committedAttrs(mode: string, policy: string, relevant: boolean): Attributes {
  return {
    [ATTR.mode]: mode,
    ...(policy !== "" && { [ATTR.policy]: policy }),
    [ATTR.decisionRelevant]: relevant,
  };
}

function oneAttr(key: string): (value: string) => Attributes {
  return (value) => ({ [key]: value });
}

/** ms → s, NaN for what is not finite (not recorded), never below 0. */
function seconds(ms: number): number {
  return Number.isFinite(ms) ? Math.max(0, ms) / 1000 : NaN;
}

/**
 * A `FanoutObserver` that records the metrics of each fan-out when it ends, plus in-flight branches
 * (through `instrumentTransport`), branch durations and the per-peer estimate gauges.
 *
 * @example
 * const m = new FanoutMetrics({ estimates: latencyBook });
 * const coordinator = new Coordinator({ transport: instrumentTransport(t, { metrics: m }), observer: m });
 */
export class FanoutMetrics implements FanoutObserver {
  readonly #clock: Clock;
  readonly #decisions = new Cells(decisionAttrs);
  readonly #committed = new Cells(committedAttrs);
  readonly #outcomes = new BranchCells();
  readonly #lostWork = new Cells(oneAttr(ATTR.branchOutcome));
  readonly #violations = new Cells(oneAttr(ATTR.violationCode));
  readonly #misses = new Cells(oneAttr(ATTR.mode));
  readonly #noAnswer = new Cells(oneAttr(ATTR.mode));
  readonly #probes = new Cells(oneAttr(ATTR.probeState));
  readonly #branchCommit: WindowedRatio;
  readonly #branchPivotal: WindowedRatio;
  readonly #fanoutRelevant: WindowedRatio;
  readonly #modeAttrs = new Map<string, Attributes>();
  #inFlight = 0;
  /** Histogram values of the fan-outs not yet recorded (VALUES each), their modes and contexts. */
  readonly #queued = new Float64Array(BATCH * VALUES);
  readonly #queuedMode: string[] = [];
  readonly #queuedIn: Context[] = [];

  readonly #histograms: readonly Histogram[];
  readonly #durations: BranchDurations;
  readonly #observables: Observable[];
  readonly #batch: (r: BatchObservableResult) => void;
  readonly #meter: Meter;
  readonly #peers: PeerEstimateGauges;

  constructor(options: FanoutMetricsOptions = {}) {
    const meter = options.meter ?? otelMetrics.getMeter(INSTRUMENTATION_SCOPE);
    this.#meter = meter;
    this.#clock = options.clock ?? systemClock;
    const windowMs = options.ratioWindowMs ?? 60_000;
    this.#branchCommit = new WindowedRatio(windowMs, 60);
    this.#branchPivotal = new WindowedRatio(windowMs, 60);
    this.#fanoutRelevant = new WindowedRatio(windowMs, 60);

    const histogram = (name: string, description: string, unit: string, buckets: number[]): Histogram =>
      meter.createHistogram(name, { description, unit, advice: { explicitBucketBoundaries: buckets } });
    // in the order of the queued values
    this.#histograms = [
      histogram(
        METRIC.budget,
        "Remaining budget of each fan-out when it was classified",
        "s",
        SECONDS_BUCKETS,
      ),
      histogram(METRIC.costEstimate, "Abandon cost estimate the classification used", "s", SECONDS_BUCKETS),
      histogram(METRIC.duration, "Time from the start of a fan-out to its decision", "s", SECONDS_BUCKETS),
      histogram(
        METRIC.informationGain,
        "Information gain per used answer, one observation per fan-out with answers",
        "bit",
        BIT_BUCKETS,
      ),
    ];
    this.#durations = new BranchDurations(meter);

    // Observable counters read from cells: [instrument name, description, unit, cells].
    const counted: [string, string, string, Cells | BranchCells][] = [
      [METRIC.decisions, "Fan-outs by the mode the policy chose and its reason", "{fanout}", this.#decisions],
      [
        METRIC.committed,
        "Fan-outs whose action rests on answers, by mode, policy and whether the action differs from the local decision without fanning out",
        "{fanout}",
        this.#committed,
      ],
      [
        METRIC.outcomes,
        "Branches by outcome, fan-out mode and whether pivotal (leave-one-out)",
        "{branch}",
        this.#outcomes,
      ],
      [
        METRIC.violations,
        "SpeculationBudgetViolations (budget <= 0, p99 < p50)",
        "{violation}",
        this.#violations,
      ],
      [METRIC.deadlineMisses, "Fan-outs whose decision came after their deadline", "{fanout}", this.#misses],
      [
        METRIC.noAnswer,
        "Fan-outs that sent branches and had no answer by their deadline: the action is the model's prior",
        "{fanout}",
        this.#noAnswer,
      ],
      [
        METRIC.horizonProbes,
        "Horizon probes (cut branches left running to learn the tail) by state: issued, completed, expired",
        "{branch}",
        this.#probes,
      ],
    ];
    const counters = counted.map(([name, description, unit]) =>
      meter.createObservableCounter(name, { description, unit, valueType: ValueType.INT }),
    );
    const lostWork = meter.createObservableCounter(METRIC.lostWork, {
      description: "Peer time lost to abandoned and late branches, as the peers reported it",
      unit: "s",
    });
    const inFlight = meter.createObservableUpDownCounter(METRIC.inFlight, {
      description: "Branches sent and not yet settled",
      unit: "{branch}",
      valueType: ValueType.INT,
    });
    const ratio = (name: string, description: string): ObservableGauge =>
      meter.createObservableGauge(name, { description, unit: "1" });
    const ratios: [ObservableGauge, WindowedRatio][] = [
      [
        ratio(METRIC.commitRatio, "Committed branches / all branches, over a sliding window"),
        this.#branchCommit,
      ],
      [
        ratio(
          METRIC.pivotalCommitRatio,
          "Pivotal answers (leave-one-out) / used answers (committed or partial), over a sliding window",
        ),
        this.#branchPivotal,
      ],
      [
        ratio(
          METRIC.relevantCommitRatio,
          "Committed fan-outs whose action differs from the local decision / committed fan-outs, over a sliding window",
        ),
        this.#fanoutRelevant,
      ],
    ];
    this.#observables = [...counters, lostWork, inFlight, ...ratios.map(([g]) => g)];
    this.#batch = (r) => {
      this.#record();
      counted.forEach(([, , , cells], i) => cells.observe(r, counters[i]!));
      this.#lostWork.observe(r, lostWork);
      r.observe(inFlight, this.#inFlight);
      const now = this.#clock.now();
      for (const [gauge, window] of ratios) {
        const v = window.ratio(now);
        if (Number.isFinite(v)) r.observe(gauge, v);
      }
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

  /** Durations and lost work from settled branch reports (an abandoned branch's report may come late). */
  onBranchEnd(_fanoutId: string, b: BranchRecord): void {
    if (b.unsettled === true) return;
    this.#durations.add(b);
    if (b.probe === true) this.#probe(b.result.kind === "answer" ? "completed" : "expired");
    if (!(b.lostWorkMs > 0)) return;
    this.#lostWork.add(b.outcome, "", false, b.lostWorkMs / 1000);
  }

  #probe(state: "issued" | "completed" | "expired"): void {
    this.#probes.add(state, "", false, 1);
  }

  /** Budget violations, whether turned into degrade or thrown to the caller. */
  onViolation(_fanoutId: string, violation: Error): void {
    const c = (violation as { code?: unknown }).code;
    const code = typeof c === "string" ? c : violation.name;
    this.#violations.add(code, "", false, 1);
  }

  /** Counts the fan-out, and queues its histogram values (see the file comment). */
  onFanoutEnd(o: FanoutOutcome): void {
    const c = o.classification;
    const mode = c.mode;
    this.#decisions.add(mode, c.reason, false, 1);
    let committed = 0;
    let used = 0;
    let pivotal = 0;
    for (const b of o.branches) {
      const out = b.outcome;
      if (b.probe === true) this.#probe("issued");
      this.#outcomes.add(mode, out, b.decisionRelevant);
      if (out === "committed") committed++;
      if (out === "committed" || out === "partial") {
        used++;
        if (b.decisionRelevant) pivotal++;
      }
    }
    const now = this.#clock.now();
    if (o.branches.length > 0) this.#branchCommit.add(now, committed, o.branches.length);
    if (used > 0) this.#branchPivotal.add(now, pivotal, used);
    if (!o.degraded && o.answered > 0)
      this.#commitFanout(mode, o.classification.policy ?? "", o.decisionChanged, now);
    if (o.deadlineMissed) this.#misses.add(mode, "", false, 1);
    if (answeredByNone(o)) this.#noAnswer.add(mode, "", false, 1);

    const i = this.#queuedMode.length * VALUES;
    const q = this.#queued;
    q[i] = seconds(c.budgetMs);
    q[i + 1] = seconds(c.abandonCostMs);
    q[i + 2] = seconds(o.elapsedMs);
    const gain = o.infoGainPerCommitted;
    q[i + 3] = gain !== null && Number.isFinite(gain) ? Math.max(0, gain) : NaN;
    this.#queuedMode.push(mode);
    // The records take the context the fan-out ended in, as they would have then (exemplars).
    this.#queuedIn.push(context.active());
    if (this.#queuedMode.length === BATCH) this.#record();
  }

  /** A fan-out whose action rests on answers: decision-relevant when that action is not the local one. */
  #commitFanout(mode: string, policy: string, relevant: boolean, now: number): void {
    this.#committed.add(mode, policy, relevant, 1);
    this.#fanoutRelevant.add(now, relevant ? 1 : 0, 1);
  }

  /** Records the queued histogram values. */
  #record(): void {
    const q = this.#queued;
    const n = this.#queuedMode.length;
    for (let k = 0; k < n; k++) {
      const attrs = this.#attrsOf(this.#queuedMode[k]!);
      const ctx = this.#queuedIn[k]!;
      for (let v = 0; v < VALUES; v++) {
        const x = q[k * VALUES + v]!;
        if (!Number.isNaN(x)) this.#histograms[v]!.record(x, attrs, ctx);
      }
    }
    this.#queuedMode.length = 0;
    this.#queuedIn.length = 0;
    this.#durations.record();
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
