/**
 * The flight recorder: the last N fan-out decisions with their reasons, in memory, so a user can see
 * why a fan-out speculated or degraded without a tracing backend (`tailswarm decisions <addr>`).
 * A pure `FanoutObserver` over a ring buffer: no OpenTelemetry, no I/O, O(1) per fan-out.
 */
import type { Clock } from "../clock/clock.js";
import { systemClock } from "../clock/clock.js";
import type { BranchOutcome, BranchRecord, FanoutObserver, FanoutOutcome } from "../engine/outcome.js";
import type { Classification } from "../policy/types.js";
import { shownInequality } from "./shown-inequality.js";
import type { HedgedOutcome, HedgedSettlement } from "../engine/hedge-outcome.js";
import { describeHedgeDecision } from "../hedge/describe-decision.js";
import { shownKinds } from "../policy/shown-kinds.js";
import type { EstimateKind } from "../policy/shown-kinds.js";

/** One decision as the recorder keeps it. JSON-safe: no NaN or Infinity (null instead). */
export interface DecisionRecord {
  readonly fanoutId: string;
  /** When the fan-out ended, epoch ms (the engine's clock). */
  readonly atUnixMs: number;
  readonly mode: string;
  readonly reason: string;
  /** The reason's condition with the numbers it was decided on, e.g. `budget 400 ms > p99 212.3 ms + …`. */
  readonly because: string;
  readonly budgetMs: number | null;
  readonly fanoutP50Ms: number | null;
  readonly fanoutP99Ms: number | null;
  /** The abandon cost estimate the classification used: from the ledger of `policy`. */
  readonly abandonCostMs: number | null;
  /** The policy that decided (each keeps its own abandon ledger); "" when not known. */
  readonly policy: string;
  readonly decisionRelevant: boolean;
  readonly size: number;
  /** "all" or "quorum:k". */
  readonly requirement: string;
  readonly estimateStatus: "fresh" | "unknown";
  /**
   * What each fan-out quantile is: `known`, `lower-bound` (the true quantile is at least the number: it
   * lies in censored mass beyond the horizon), or `unknown` (the estimate is unknown).
   */
  readonly p50Kind: EstimateKind;
  readonly p99Kind: EstimateKind;
  /** Where the window stops seeing completions, ms (null when every quantile is known). */
  readonly horizonMs: number | null;
  readonly unknownPeers: readonly string[];
  /** Oldest per-peer estimate age in the set, ms (null when a peer never had a sample). */
  readonly estimateAgeMs: number | null;
  readonly minSamples: number;
  /**
   * Where p50/p99 came from: `observed` (the set's own completion times, which see correlated tails) or
   * `independent` (Π F_i of the per-peer CDFs).
   */
  readonly estimateBasis: "observed" | "independent";
  readonly branches: Readonly<Record<BranchOutcome, number>>;
  readonly answered: number;
  /** Peer work lost to abandoned and late branches, ms (grows when late reports arrive). */
  readonly lostWorkMs: number;
  readonly decisionChanged: boolean;
  readonly degraded: boolean;
  readonly deadlineMissed: boolean;
  readonly elapsedMs: number;
  readonly infoGainPerCommitted: number | null;
  readonly violation: { readonly code: string; readonly message: string } | null;
  /** Trace id of the fan-out's span, when tracing is on. */
  readonly traceId: string | null;
  /**
   * A replicated fan-out (mode `replicated`, reason its hedge policy): each hedge decision that settled
   * something — a backup sent or refused for good — with its reason and numbers.
   */
  readonly hedges?: readonly string[];
}

export interface FlightRecorderOptions {
  /** Decisions kept. Default 256. */
  readonly capacity?: number;
  /** The engine's clock. Default: system clock. */
  readonly clock?: Clock;
  /** Looks up the trace id of a fan-out (FanoutTracer.traceIdOf), called when the fan-out ends. */
  readonly traceIdOf?: (fanoutId: string) => string | undefined;
}

const NONE: readonly string[] = Object.freeze([]);

/**
 * A decision as kept, without `because`: that is built when read (see `#because`). Each slot of the
 * ring is one object, written over in place by the fan-out that takes it: a record lives for
 * `capacity` fan-outs, long enough for the collector to promote it, so a new one per fan-out would
 * fill the old generation (and its branch tally, on the gRPC coordinator's hot path) for nothing.
 */
type Kept = {
  -readonly [K in keyof Omit<DecisionRecord, "because" | "branches">]: DecisionRecord[K];
} & { readonly branches: Record<BranchOutcome, number> };

/** A slot's record before its first fan-out; every field is written before it is read. */
function blank(): Kept {
  return {
    fanoutId: "",
    atUnixMs: 0,
    mode: "",
    reason: "",
    budgetMs: null,
    fanoutP50Ms: null,
    fanoutP99Ms: null,
    abandonCostMs: null,
    policy: "",
    decisionRelevant: false,
    size: 0,
    requirement: "all",
    estimateStatus: "unknown",
    p50Kind: "unknown",
    p99Kind: "unknown",
    horizonMs: null,
    unknownPeers: NONE,
    estimateAgeMs: null,
    minSamples: 0,
    estimateBasis: "independent",
    branches: { committed: 0, partial: 0, abandoned: 0, late: 0, failed: 0 },
    answered: 0,
    lostWorkMs: 0,
    decisionChanged: false,
    degraded: false,
    deadlineMissed: false,
    elapsedMs: 0,
    infoGainPerCommitted: null,
    violation: null,
    traceId: null,
    hedges: undefined,
  };
}

function num(v: number): number | null {
  return Number.isFinite(v) ? v : null;
}

/**
 * @example
 * const recorder = new FlightRecorder({ capacity: 512 });
 * const coordinator = new Coordinator({ transport, observer: combineObservers([recorder, tracer]) });
 * recorder.last(10); // newest first
 */
export class FlightRecorder implements FanoutObserver {
  readonly capacity: number;
  /** Each decision without `because`; beside it, the classification that is built from when read (or the text). */
  readonly #ring: (Kept | undefined)[];
  readonly #because: (Classification | string | undefined)[];
  /** Recorded fan-outs with branches still unsettled: their late reports add lost work. */
  readonly #pending = new Map<string, { decision: { lostWorkMs: number }; branchIds: Set<string> }>();
  readonly #clock: Clock;
  readonly #traceIdOf: ((fanoutId: string) => string | undefined) | undefined;
  #next = 0;
  #recorded = 0;

  constructor(options: FlightRecorderOptions = {}) {
    const capacity = options.capacity ?? 256;
    if (!Number.isInteger(capacity) || capacity < 1) {
      throw new RangeError(`FlightRecorder capacity: got ${capacity}, expected an integer >= 1`);
    }
    this.capacity = capacity;
    this.#ring = new Array<Kept | undefined>(capacity);
    this.#because = new Array<Classification | string | undefined>(capacity);
    this.#clock = options.clock ?? systemClock;
    this.#traceIdOf = options.traceIdOf;
  }

  /** Decisions recorded since start (including those the ring no longer holds). */
  get recorded(): number {
    return this.#recorded;
  }

  /** A branch report that arrives after its fan-out ended adds the work the peer really lost. */
  onBranchEnd(fanoutId: string, record: BranchRecord): void {
    if (record.unsettled === true || record.lostWorkMs <= 0) return;
    const p = this.#pending.get(fanoutId);
    if (p === undefined || !p.branchIds.delete(record.branchId)) return;
    p.decision.lostWorkMs += record.lostWorkMs;
    if (p.branchIds.size === 0) this.#pending.delete(fanoutId);
  }

  onFanoutEnd(o: FanoutOutcome): void {
    const c = o.classification;
    const e = o.estimate;
    const kinds = shownKinds(c, e);
    // what may throw is read before the slot is taken: a slot is never left half written
    const traceId = this.#traceIdOf?.(o.fanoutId) ?? null;
    const d = this.#take(o.fanoutId, c, o.branches);
    d.atUnixMs = this.#clock.now();
    d.mode = c.mode;
    d.reason = c.reason;
    d.budgetMs = num(c.budgetMs);
    d.fanoutP50Ms = num(c.fanoutP50Ms);
    d.fanoutP99Ms = num(c.fanoutP99Ms);
    d.abandonCostMs = num(c.abandonCostMs);
    d.policy = c.policy ?? "";
    d.decisionRelevant = c.relevant;
    d.size = e.size;
    d.requirement = e.requirement.kind === "quorum" ? `quorum:${e.requirement.k}` : "all";
    d.estimateStatus = e.status;
    d.p50Kind = kinds.p50;
    d.p99Kind = kinds.p99;
    d.horizonMs = num(e.horizonMs ?? Infinity);
    d.unknownPeers = e.unknownPeers.length === 0 ? NONE : [...e.unknownPeers];
    d.estimateAgeMs = num(e.maxAgeMs);
    d.minSamples = e.minSamples;
    d.estimateBasis = e.basis ?? "independent";
    d.answered = o.answered;
    d.lostWorkMs = o.abandonCostMs;
    d.decisionChanged = o.decisionChanged;
    d.degraded = o.degraded;
    d.deadlineMissed = o.deadlineMissed;
    d.elapsedMs = o.elapsedMs;
    d.infoGainPerCommitted = o.infoGainPerCommitted === null ? null : num(o.infoGainPerCommitted);
    d.violation = o.violation === undefined ? null : { code: o.violation.code, message: o.violation.message };
    d.traceId = traceId;
    d.hedges = undefined;
  }

  /** A replicated (hedged) fan-out: its hedge decisions, as a HedgeObserver. */
  onHedgedFanoutEnd(o: HedgedOutcome): void {
    const won = o.backups.filter((b) => b.won).length;
    const refused = o.decisions.filter((d) => d.decision.action === "refuse").length;
    const because =
      `any ${o.k} of ${o.replicas} replicas under ${o.policy}: ${o.backups.length} backup(s) sent (${won} won), ` +
      `${refused} refused`;
    const hedges = o.decisions.map(describeHedgeDecision);
    const d = this.#take(o.fanoutId, because, o.branches);
    d.atUnixMs = this.#clock.now();
    d.mode = "replicated";
    d.reason = o.policy;
    d.budgetMs = num(o.budgetMs);
    d.fanoutP50Ms = null;
    d.fanoutP99Ms = null;
    d.abandonCostMs = null;
    d.policy = o.policy;
    d.decisionRelevant = false;
    d.size = o.replicas;
    d.requirement = `quorum:${o.k}`;
    d.estimateStatus = "unknown";
    d.p50Kind = "unknown";
    d.p99Kind = "unknown";
    d.horizonMs = null;
    d.unknownPeers = NONE;
    d.estimateAgeMs = null;
    d.minSamples = 0;
    d.estimateBasis = "independent";
    d.answered = o.answers.size;
    d.lostWorkMs = o.branches.reduce((sum, b) => sum + b.lostWorkMs, 0);
    d.decisionChanged = false;
    d.degraded = false;
    d.deadlineMissed = o.deadlineMissed;
    d.elapsedMs = o.elapsedMs;
    d.infoGainPerCommitted = null;
    d.violation = null;
    d.traceId = null;
    d.hedges = hedges;
  }

  /** The losers' lost work, as the peers reported it, once every branch has settled. */
  onHedgedFanoutSettled(fanoutId: string, settlement: HedgedSettlement): void {
    const p = this.#pending.get(fanoutId);
    if (p === undefined) return;
    p.decision.lostWorkMs = settlement.abandonCostMs;
    this.#pending.delete(fanoutId);
  }

  /**
   * The next slot's record for `fanoutId`, its branches tallied, for the caller to write the rest over
   * (the fan-out the slot held leaves the ring and stops waiting for late reports); `because` is kept
   * beside it. A fan-out with branches still unsettled waits for their late reports.
   */
  #take(fanoutId: string, because: Classification | string, branches: readonly BranchRef[]): Kept {
    let record = this.#ring[this.#next];
    if (record === undefined) this.#ring[this.#next] = record = blank();
    else this.#pending.delete(record.fanoutId);
    this.#because[this.#next] = because;
    this.#next = (this.#next + 1) % this.capacity;
    this.#recorded++;
    record.fanoutId = fanoutId;
    const unsettled = tallyBranches(branches, record.branches);
    if (unsettled !== undefined) this.#pending.set(fanoutId, { decision: record, branchIds: unsettled });
    return record;
  }

  /** The last `n` decisions (default: all kept), newest first. */
  last(n = this.capacity): DecisionRecord[] {
    const out: DecisionRecord[] = [];
    const count = Math.min(Math.max(0, Math.floor(n)), this.capacity, this.#recorded);
    for (let i = 1; i <= count; i++) {
      const at = (this.#next - i + this.capacity) % this.capacity;
      const record = this.#ring[at];
      const because = this.#because[at];
      if (record === undefined || because === undefined) continue;
      const { hedges, ...rest } = record;
      out.push({
        ...rest,
        because: typeof because === "string" ? because : shownInequality(because),
        branches: { ...record.branches },
        ...(hedges !== undefined && { hedges }),
      });
    }
    return out;
  }

  clear(): void {
    this.#ring.fill(undefined);
    this.#because.fill(undefined);
    this.#pending.clear();
    this.#next = 0;
  }
}

/** What the tally reads of a branch report. */
interface BranchRef {
  readonly outcome: BranchOutcome;
  readonly unsettled?: boolean;
  readonly branchId: string;
}

/** Counts into `branches` how many ended each way; returns the ids of those a transport never settled. */
function tallyBranches(
  records: readonly BranchRef[],
  branches: Record<BranchOutcome, number>,
): Set<string> | undefined {
  branches.committed = 0;
  branches.partial = 0;
  branches.abandoned = 0;
  branches.late = 0;
  branches.failed = 0;
  let unsettled: Set<string> | undefined;
  for (const b of records) {
    branches[b.outcome]++;
    if (b.unsettled === true) (unsettled ??= new Set()).add(b.branchId);
  }
  return unsettled;
}
