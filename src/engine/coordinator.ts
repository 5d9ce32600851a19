/**
 * `Coordinator.fanOut`: the nine steps of one fan-out (docs/architecture.md, "One fan-out").
 *
 *   1 budget   deadline − now − reserve
 *   2 candidates, 3 route (injectable; peers whose fresh p99 exceeds the budget are left out of a pick)
 *   4 estimate  fan-out p50/p99 of the chosen set (LatencySource.fanout, cached per tick there)
 *   5 cost      expected abandon cost (the policy's own AbandonLedger: PolicyLedgers)
 *   6 relevance can any answers change the action? (model.canFlip with no answers yet)
 *   7 decide    speculate | synchronous | degrade (src/policy `decide`, with the router's judgement of
 *               speculation and whether a fallback exists; violations counted)
 *   8 execute   execute-branches.ts, or the caller's fallback
 *   9 record    latency samples (BranchSet), ledger, observer, the FanoutOutcome
 *
 * Measurement branches: when the decision settles without an outstanding branch, that branch is left
 * running (its answer unused, never charged to the ledger) while its peer's estimate needs samples
 * (`measureBelowSamples`) or with probability `explorationRate`, at most `maxMeasurementsPerPeer` per
 * peer — otherwise a peer every speculation decides out would only ever be censored, and its estimate
 * would go stale (docs/architecture.md, "Measurement branches").
 *
 * @example
 * const coordinator = new Coordinator({ transport, book: new LatencyBook(), clock });
 * const outcome = await coordinator.fanOut(
 *   { kind: "vote", payload: { question: "deploy?" } },
 *   { peers: ["a", "b", "c"], budgetMs: 250, model: quorumVote({ prior: "no" }), fallback: () => "no" },
 * );
 * outcome.classification.mode; // "speculate" | "synchronous" | "degrade"
 * outcome.action;              // "yes" | "no"
 */
import { nanoid } from "nanoid";
import type { Clock } from "../clock/clock.js";
import { systemClock } from "../clock/clock.js";
import { createRng } from "../util/rng.js";
import { scoreRelevance } from "../decision/score-relevance.js";
import { sameAction } from "../decision/same-action.js";
import { showValue, TailswarmError } from "../errors.js";
import type { FanoutEstimate, PeerId, Requirement } from "../estimate/types.js";
import { decide } from "../policy/decide.js";
import type { Classification, Mode } from "../policy/types.js";
import { SpeculationBudgetViolation, violationOf } from "../policy/violation.js";
import type { AbandonLedgerOptions } from "./abandon-ledger.js";
import { PolicyLedgers } from "./policy-ledgers.js";
import { HorizonProbes } from "./horizon-probes.js";
import { RunningCounts } from "../util/running-counts.js";
import type { HorizonProbeOptions, HorizonProbeStats } from "./horizon-probes.js";
import type { LimitListener } from "./limit-listener.js";
import { branchRecord } from "./branch-record.js";
import type { RecordContext } from "./branch-record.js";
import { BranchSet } from "./branch-set.js";
import type { Branch } from "./branch-set.js";
import { combineObservers } from "./combine-observers.js";
import { executeBranches } from "./execute-branches.js";
import type { LatencySource } from "../estimate/latency-source.js";
import type { RouteChoice } from "./fanout-router.js";
import { normalizeOptions } from "./options.js";
import type { FanoutOptions, NormalizedOptions } from "./options.js";
import type { FanoutObserver, FanoutOutcome } from "./outcome.js";
import type { PeerTransport, Task } from "./transport.js";
import { watchUnsettled } from "./watch-unsettled.js";

export interface CoordinatorOptions {
  readonly transport: PeerTransport;
  /** Per-peer latency estimates: src/estimate's LatencyBook, or anything with the same methods. */
  readonly book: Omit<LatencySource, "peers">;
  /** Default: the system clock. */
  readonly clock?: Clock;
  /** Options of the abandon ledgers, one per policy (PolicyLedgers). Default: the ledger's defaults. */
  readonly ledger?: AbandonLedgerOptions;
  readonly observer?: FanoutObserver;
  /** This node's id, sent as `origin` on every branch. Default "local". */
  readonly nodeId?: string;
  /** After abandoning or at the deadline, wait at most this long for the transport to report, ms. Default 0. */
  readonly settleGraceMs?: number;
  /** A branch the transport has not settled this long after its deadline is ended as failed, ms. Default 5_000. */
  readonly settleTimeoutMs?: number;
  /**
   * Probability, in [0, 1], that a branch given up because the decision was settled runs on as a
   * measurement branch although its peer's estimate has enough samples (see the class comment); drawn as
   * the branch is issued. Default 0.05.
   */
  readonly explorationRate?: number;
  /**
   * A decided-out branch always runs on as a measurement branch while its peer's estimate is unknown or
   * holds fewer completed samples than this. Default 2 × the book's `minSamples` (40 without one); 0 turns
   * this off (only `explorationRate` then measures).
   */
  readonly measureBelowSamples?: number;
  /** Measurement branches running at once per peer, at most. Default 2. */
  readonly maxMeasurementsPerPeer?: number;
  /** Uniform [0, 1) source of the exploration draws. Default: a PRNG with a fixed seed (reproducible runs). */
  readonly random?: () => number;
  /** Horizon probes: cut branches left running to learn a tail beyond the budget (see HorizonProbes). */
  readonly horizonProbe?: HorizonProbeOptions;
  /** Told when a horizon-probe cap refuses a probe (`horizonProbe.<key>`); a node rate-limits it into its log. */
  readonly onLimit?: LimitListener;
  /**
   * true: the observer hears of a fan-out's end (a degrade's decision and violation, `onBranchEnd`,
   * `onFanoutEnd`) two event-loop turns after `fanOut` resolves, in the same order and with the same
   * records, so a gRPC server's reply is written before its telemetry and recorders run. Default
   * false: before it resolves.
   */
  readonly deferObservers?: boolean;
}

export interface CoordinatorStats {
  readonly fanouts: number;
  readonly byMode: Readonly<Record<Mode, number>>;
  /** SpeculationBudgetViolations met (turned into degrade or thrown). */
  readonly violations: number;
  /** Horizon probes issued, completed and expired. */
  readonly horizonProbes: HorizonProbeStats;
}

const ALL: Requirement = { kind: "all" };
const NO_ANSWERS: ReadonlyMap<PeerId, never> = new Map<PeerId, never>();

export class Coordinator {
  /** Each policy's own abandon ledger: the one its fan-outs decide with and charge their cuts to. */
  readonly ledgers: PolicyLedgers;
  readonly #transport: PeerTransport;
  readonly #book: Omit<LatencySource, "peers">;
  readonly #clock: Clock;
  readonly #observer: Required<FanoutObserver>;
  readonly #nodeId: string;
  readonly #graceMs: number;
  readonly #settleTimeoutMs: number;
  readonly #explorationRate: number;
  readonly #measureBelow: number;
  readonly #maxMeasurements: number;
  readonly #random: () => number;
  /** Measurement branches running per peer. */
  readonly #measuring = new RunningCounts<PeerId>();
  readonly #probes: HorizonProbes;
  readonly #deferObservers: boolean;
  #fanouts = 0;
  #violations = 0;
  readonly #byMode: Record<Mode, number> = { speculate: 0, synchronous: 0, degrade: 0 };

  constructor(options: CoordinatorOptions) {
    if (typeof options?.transport?.branch !== "function") {
      throw new TailswarmError("INVALID_ARGUMENT", "Coordinator option transport: expected a PeerTransport");
    }
    if (typeof options.book?.fanout !== "function" || typeof options.book.begin !== "function") {
      throw new TailswarmError("INVALID_ARGUMENT", "Coordinator option book: expected a LatencyBook");
    }
    this.#transport = options.transport;
    this.#book = options.book;
    this.#clock = options.clock ?? systemClock;
    this.ledgers = new PolicyLedgers(options.ledger);
    this.#observer = combineObservers([options.observer]);
    this.#nodeId = options.nodeId ?? "local";
    this.#graceMs = nonNegative("settleGraceMs", options.settleGraceMs ?? 0);
    this.#settleTimeoutMs = nonNegative("settleTimeoutMs", options.settleTimeoutMs ?? 5_000);
    this.#explorationRate = options.explorationRate ?? 0.05;
    if (!(this.#explorationRate >= 0 && this.#explorationRate <= 1)) {
      throw new TailswarmError(
        "INVALID_ARGUMENT",
        `Coordinator option explorationRate: got ${String(options.explorationRate)}, expected a number in [0, 1]`,
      );
    }
    const minSamples = options.book.options?.minSamples;
    this.#measureBelow = nonNegative(
      "measureBelowSamples",
      options.measureBelowSamples ?? 2 * (typeof minSamples === "number" ? minSamples : 20),
    );
    this.#maxMeasurements = nonNegative("maxMeasurementsPerPeer", options.maxMeasurementsPerPeer ?? 2);
    if (options.random !== undefined && typeof options.random !== "function") {
      throw new TailswarmError("INVALID_ARGUMENT", "Coordinator option random: expected a function");
    }
    this.#random = options.random ?? createRng(0x7a11);
    this.#probes = new HorizonProbes(options.horizonProbe, options.onLimit);
    this.#deferObservers = options.deferObservers === true;
  }

  stats(): CoordinatorStats {
    return {
      fanouts: this.#fanouts,
      byMode: { ...this.#byMode },
      violations: this.#violations,
      horizonProbes: this.#probes.stats(),
    };
  }

  async fanOut<Answer, Action>(
    task: Task,
    options: FanoutOptions<Answer, Action>,
  ): Promise<FanoutOutcome<Action>> {
    const clock = this.#clock;
    const start = clock.now();
    if (typeof task !== "object" || task === null || typeof task.kind !== "string" || task.kind === "") {
      throw new TailswarmError(
        "INVALID_ARGUMENT",
        `fanOut task.kind: got ${showValue(task?.kind)}, expected a non-empty string`,
      );
    }
    const o = normalizeOptions(options, start);
    if (o.signal?.aborted) throw abortedError(o.signal);
    const fanoutId = nanoid();
    this.#fanouts++;

    const budgetMs = o.deadline - start - o.reserveMs; // 1
    const { peers, speculationFeasible } = this.#route(task, o, start, budgetMs); // 2, 3
    const requirement = o.required ?? ALL;
    const estimate = this.#book.fanout(peers, requirement, start); // 4
    const ledger = this.ledgers.of(o.policy);
    const abandonCostMs = ledger.expectedAbandonCostMs(peers, start); // 5
    const relevant = o.model.canFlip(NO_ANSWERS, peers); // 6
    let classification: Classification; // 7
    try {
      classification = decide({
        policy: o.policy,
        budgetMs,
        estimate,
        abandonCostMs,
        relevant,
        speculationFeasible,
        anyPeerLive: peers.length > 0,
        hasFallback: o.fallback !== undefined || o.usePriorOnDegrade,
      });
    } catch (error) {
      // no fallback to degrade to: the caller gets the violation
      if (error instanceof SpeculationBudgetViolation) this.#violation(fanoutId, error);
      throw error;
    }
    const violation = violationOf(classification);
    if (violation !== undefined) this.#violations++;
    this.#byMode[classification.mode]++;
    const decided = (): void => {
      if (violation !== undefined) this.#observer.onViolation(fanoutId, violation);
      this.#observer.onDecision(fanoutId, classification, estimate);
    };
    if (classification.mode === "degrade") {
      // nothing is issued, so the decision is told with the end (after the reply when deferred)
      this.#tell(decided);
      const decidedMs = clock.now() - start;
      return this.#degrade(fanoutId, o, classification, estimate, start, decidedMs, violation); // 8 (degrade)
    }
    decided(); // before any branch is issued: branch spans hang under the decision's
    const decidedMs = clock.now() - start;
    const set = new BranchSet<Answer>({
      transport: this.#transport,
      clock,
      book: this.#book,
      model: o.model,
      fanoutId,
      origin: this.#nodeId,
      hop: o.hop,
      deadline: start + budgetMs,
      task,
      requirement,
      probeDeadline: start + this.#probes.options.maxMs,
    });
    const run = await executeBranches({
      clock,
      set,
      mode: classification.mode,
      peers,
      requirement,
      model: o.model,
      // synchronous waits for the required answers (the founding note: "use partial results without paying
      // abandon cost"); only a speculation stops early and abandons what the answers made moot
      stopWhenDecided: relevant && classification.mode === "speculate",
      deadline: start + budgetMs,
      signal: o.signal,
      continuation: o.continuation,
      settleGraceMs: this.#graceMs,
      candidate: (peer) => this.#candidate(peer, estimate),
      measure: (peer) => this.#measure(peer),
      probes: this.#probeHooks,
    }); // 8

    // 9 record — probes and measurement branches are released before the model is asked again, so a
    // model that throws here cannot leave a peer's probe slot taken for good
    const now = clock.now();
    const decisionRelevant = new Set<PeerId>();
    const ctx: RecordContext = {
      mode: classification.mode,
      requirementMet: run.requirementMet,
      decisionRelevant,
      now,
    };
    for (const b of set.branches) if (b.result !== undefined) this.#endedMeasurement(b);
    set.onSettledAfterClose = (b) => {
      this.#endedMeasurement(b);
      const record = branchRecord(b, ctx);
      this.#tell(() => this.#observer.onBranchEnd(fanoutId, record));
    };
    // a probe runs on to its own deadline on the peer: the watch must not fail it before that
    const lastDeadline = set.branches.some((b) => b.probe)
      ? start + Math.max(budgetMs, this.#probes.options.maxMs)
      : start + budgetMs;
    watchUnsettled(set, this.#clock, lastDeadline, this.#settleTimeoutMs);
    const score = scoreRelevance(o.model, set.answers);
    for (const peer of score.decisionRelevant) decisionRelevant.add(peer);
    const records = set.branches.map((b) => branchRecord(b, ctx));
    this.#tell(() => {
      for (const r of records) if (r.unsettled !== true) this.#observer.onBranchEnd(fanoutId, r);
    });
    const mode = classification.mode;
    void set.settled().then(() => {
      const branches = set.branches.map((b) => branchRecord(b, ctx));
      ledger.recordFanout({ mode, now: clock.now(), branches });
    });
    if (run.aborted) throw abortedError(o.signal);

    const action = score.action as Action;
    const priorAction = o.model.decide(NO_ANSWERS);
    const outcome: FanoutOutcome<Action> = {
      fanoutId,
      classification,
      estimate,
      action,
      priorAction,
      decisionChanged: !sameAction(action, priorAction),
      degraded: false,
      branches: records,
      answered: set.answers.size,
      abandonCostMs: records.reduce((sum, r) => sum + r.lostWorkMs, 0),
      infoGainPerCommitted: score.infoGainPerCommitted,
      elapsedMs: now - start,
      decidedMs,
      deadlineMissed: now > o.deadline,
      ...(run.continuation === undefined ? {} : { continuation: run.continuation }),
    };
    this.#tell(() => this.#observer.onFanoutEnd(outcome));
    return outcome;
  }

  /**
   * Asked as a branch to `peer` is issued: whether it may run on as a measurement branch if the decision
   * is settled without it (see the class comment) — the peer's estimate needs samples, or the exploration
   * draw says so. Only such a branch gets an abort signal of its own.
   */
  #candidate(peer: PeerId, fanout: FanoutEstimate): boolean {
    if (this.#measuring.of(peer) >= this.#maxMeasurements) return false;
    // the fan-out's estimate (step 4) answers for every peer at once when all are fresh and sampled enough
    const allSampled = fanout.status === "fresh" && (fanout.minCompletedSamples ?? 0) >= this.#measureBelow;
    if (this.#measureBelow > 0 && !allSampled) {
      const e = this.#book.estimate(peer, this.#clock.now());
      if (e.status !== "fresh" || e.samples < this.#measureBelow) return true;
    }
    return this.#explorationRate > 0 && this.#random() < this.#explorationRate;
  }

  /**
   * A candidate branch to `peer` is about to be abandoned because the decision is settled: true (a
   * measurement slot of the peer was free, and is now reserved) keeps it running as a measurement branch.
   */
  #measure(peer: PeerId): boolean {
    if (this.#measuring.of(peer) >= this.#maxMeasurements) return false;
    this.#measuring.started(peer);
    return true;
  }

  /** The probe hooks of every fan-out: candidates are branches to peers whose p99 is a lower bound. */
  readonly #probeHooks = {
    candidate: (peer: PeerId): boolean => {
      const now = this.#clock.now();
      if (!this.#probes.candidate(peer, now)) return false;
      const e = this.#book.estimate(peer, now);
      return e.status !== "fresh" || e.p99Kind === "lower-bound";
    },
    cut: (n: number): void => this.#probes.cut(n),
    takeCut: (peers: readonly PeerId[], stalled: boolean, wanted: number): boolean[] =>
      this.#probes.takeCut(peers, this.#clock.now(), stalled, wanted),
  };

  /** A branch ended: a probe is counted, a measurement branch frees its slot. */
  #endedMeasurement(b: Branch<unknown>): void {
    if (b.probe) this.#probes.ended(b.peer, b.result?.kind === "answer");
    else if (b.measurement) this.#measuring.ended(b.peer);
  }

  /**
   * Steps 2–3: the chosen peers, and whether the router judged them fit for a speculation (true when
   * it did not judge). When picking k of n, peers whose fresh p99 exceeds the budget are left out.
   */
  #route<Answer, Action>(
    task: Task,
    o: NormalizedOptions<Answer, Action>,
    now: number,
    budgetMs: number,
  ): RouteChoice {
    let pool = o.candidates;
    if (o.k < pool.length) {
      const eligible = pool.filter((p) => {
        const e = this.#book.estimate(p, now);
        return !(e.status === "fresh" && e.p99Ms > budgetMs);
      });
      if (eligible.length >= o.k) pool = eligible;
    }
    if (o.router === undefined) {
      return { peers: o.k === pool.length ? pool : pool.slice(0, o.k), speculationFeasible: true };
    }
    const routed = o.router(pool, o.k, {
      now,
      budgetMs,
      task,
      estimates: this.#book,
      requirement: o.required ?? ALL,
    });
    const choice: RouteChoice = Array.isArray(routed)
      ? { peers: routed, speculationFeasible: true }
      : (routed as RouteChoice);
    const chosen = choice?.peers;
    const allowed = new Set(pool);
    const distinct = new Set(chosen);
    if (
      !Array.isArray(chosen) ||
      chosen.length !== o.k ||
      distinct.size !== o.k ||
      chosen.some((p) => !allowed.has(p))
    ) {
      throw new TailswarmError(
        "INVALID_ARGUMENT",
        `fanOut option router: returned ${showValue(routed)}, expected ${o.k} distinct peers from ${showValue(pool)}`,
      );
    }
    if (typeof choice.speculationFeasible !== "boolean") {
      throw new TailswarmError(
        "INVALID_ARGUMENT",
        `fanOut option router: returned speculationFeasible ${showValue(choice.speculationFeasible)}, expected a boolean`,
      );
    }
    return choice;
  }

  /**
   * Tells the observer now, or with `deferObservers` two event-loop turns later: a gRPC server writes a
   * unary reply's message in the turn after its callback and its status in the next, and the observer
   * runs after both. One chain per notification keeps their order and the async context (the trace)
   * each was told in.
   */
  #tell(notify: () => void): void {
    if (this.#deferObservers) setImmediate(() => setImmediate(notify));
    else notify();
  }

  /** A SpeculationBudgetViolation thrown to the caller: counted and traced. */
  #violation(fanoutId: string, error: SpeculationBudgetViolation): void {
    this.#violations++;
    this.#observer.onViolation(fanoutId, error);
  }

  #degrade<Answer, Action>(
    fanoutId: string,
    o: NormalizedOptions<Answer, Action>,
    classification: Classification,
    estimate: FanoutEstimate,
    start: number,
    decidedMs: number,
    violation: SpeculationBudgetViolation | undefined,
  ): FanoutOutcome<Action> {
    const action = o.fallback !== undefined ? o.fallback() : o.model.decide(NO_ANSWERS);
    const now = this.#clock.now();
    const outcome: FanoutOutcome<Action> = {
      fanoutId,
      classification,
      estimate,
      action,
      priorAction: action,
      decisionChanged: false,
      degraded: true,
      branches: [],
      answered: 0,
      abandonCostMs: 0,
      infoGainPerCommitted: null,
      elapsedMs: now - start,
      decidedMs,
      deadlineMissed: now > o.deadline,
      ...(violation === undefined ? {} : { violation: { code: violation.code, message: violation.message } }),
    };
    this.#tell(() => this.#observer.onFanoutEnd(outcome));
    return outcome;
  }
}

function abortedError(signal: AbortSignal | undefined): TailswarmError {
  return new TailswarmError("ABORTED", "fanOut: options.signal aborted; every branch was abandoned", {
    cause: signal?.reason,
  });
}

function nonNegative(field: string, value: number): number {
  if (typeof value !== "number" || !(value >= 0) || !Number.isFinite(value)) {
    throw new TailswarmError(
      "INVALID_ARGUMENT",
      `Coordinator option ${field}: got ${String(value)}, expected a finite number >= 0`,
    );
  }
  return value;
}
