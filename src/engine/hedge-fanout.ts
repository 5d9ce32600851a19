/**
 * A replicated fan-out: "any k of these r replicas" (r > k). The first k (the router's order) get a
 * branch at once; the rest are held as backups. While fewer than k have answered, each outstanding
 * branch is put to `decideBackup` (src/hedge, the one owner of that decision) at the times it asks for,
 * for the spares in the router's order: a refusal about the spare itself (`SPARE_REFUSALS`: its estimate
 * unusable, or its p99 too long to land) passes to the next spare. A backup it sends is a speculative
 * branch to that spare, and may itself be backed up by another.
 * The moment k answers are in, every other branch is a loser and is abandoned through the same path as a
 * speculation's (the transport's abort: over gRPC the abandon stream), so the peer reports its real lost
 * work; once all have settled the fan-out is charged to the abandon ledger and each loser is already a
 * right-censored observation in the latency book (BranchSet: abandoned at its age). At the deadline what
 * is still out is cut the same way.
 *
 * The extra-load ceiling, when the policy has one, counts every fan-out's primaries and admits its
 * backups (src/hedge/extra-load-ceiling.ts).
 *
 * @example
 * const hedged = new HedgedFanout({ transport, book, clock, policy: { name: "gated", maxExtraLoad: 0.05 } });
 * const out = await hedged.run({ kind: "retrieve", payload }, { replicas: ["a", "b", "c"], k: 1, budgetMs: 200 });
 * out.answers; out.backups; (await out.settled).abandonCostMs;
 */
import { nanoid } from "nanoid";
import type { Clock } from "../clock/clock.js";
import { systemClock } from "../clock/clock.js";
import type { DecisionModel } from "../decision/types.js";
import { invalid, TailswarmError } from "../errors.js";
import type { LatencySource } from "../estimate/latency-source.js";
import type { PeerId } from "../estimate/types.js";
import { checkHedgePolicy } from "../hedge/check-policy.js";
import { decideBackup } from "../hedge/decide-backup.js";
import { SPARE_REFUSALS } from "../hedge/reasons.js";
import { ExtraLoadCeiling } from "../hedge/extra-load-ceiling.js";
import type { HedgeDecision, HedgePolicy, HedgeReason } from "../hedge/types.js";
import { AbandonLedger } from "./abandon-ledger.js";
import { branchRecord } from "./branch-record.js";
import type { RecordContext } from "./branch-record.js";
import { BranchSet } from "./branch-set.js";
import type { Branch } from "./branch-set.js";
import type * as Out from "./hedge-outcome.js";
import type { PeerTransport, Task } from "./transport.js";
import { watchUnsettled } from "./watch-unsettled.js";

/** The book as the hedged fan-out reads it: a LatencyBook, or anything with these methods. */
export type HedgeBook = Omit<LatencySource, "peers"> & {
  cdf(peer: PeerId, tMs: number, nowMs: number): number;
};

export interface HedgedFanoutOptions {
  readonly transport: PeerTransport;
  readonly book: HedgeBook;
  readonly policy: HedgePolicy;
  readonly clock?: Clock;
  /** Default: a ledger with its defaults. */
  readonly ledger?: AbandonLedger;
  /** The extra-load ceiling's window and allowance; its ratio is the policy's `maxExtraLoad`. */
  readonly ceiling?: { readonly windowMs?: number; readonly minBackupsPerWindow?: number };
  readonly observer?: Out.HedgeObserver;
  readonly nodeId?: string;
  /** A branch the transport has not settled this long after its deadline is ended as failed, ms. Default 5 000. */
  readonly settleTimeoutMs?: number;
}

export interface ReplicatedRun {
  /** The replicas that can each do the work, in the router's order: the first k are the primaries. */
  readonly replicas: readonly PeerId[];
  readonly k: number;
  /** From now to the fan-out's deadline, ms (the caller's deadline minus its reserve). */
  readonly budgetMs: number;
  readonly hop?: number;
  readonly signal?: AbortSignal;
}

/** Replicated work: any answer parses, none is judged (the first k are the result). */
const REPLICA_MODEL: DecisionModel<unknown, unknown> = {
  name: "replicas",
  parseAnswer: (raw) => raw,
  decide: (answers) => [...answers.values()],
  canFlip: () => true,
  informationBits: () => 0,
};

interface Watched {
  readonly branch: Branch<unknown>;
  retryAt: number;
}

export class HedgedFanout {
  readonly policy: HedgePolicy;
  readonly ledger: AbandonLedger;
  readonly ceiling: ExtraLoadCeiling | undefined;
  readonly #transport: PeerTransport;
  readonly #book: HedgeBook;
  readonly #clock: Clock;
  readonly #observer: Out.HedgeObserver;
  readonly #nodeId: string;
  readonly #settleTimeoutMs: number;
  #fanouts = 0;
  #primaries = 0;
  #issued = 0;
  #won = 0;
  #lost = 0;
  #unlandable = 0;
  readonly #refused: Partial<Record<HedgeReason, number>> = {};

  constructor(options: HedgedFanoutOptions) {
    if (typeof options?.transport?.branch !== "function")
      throw invalid("HedgedFanout option transport", typeof options?.transport, "a PeerTransport");
    if (typeof options.book?.cdf !== "function" || typeof options.book.begin !== "function")
      throw invalid("HedgedFanout option book", typeof options.book, "a LatencyBook");
    this.policy = checkHedgePolicy(options.policy);
    this.#transport = options.transport;
    this.#book = options.book;
    this.#clock = options.clock ?? systemClock;
    this.ledger = options.ledger ?? new AbandonLedger();
    this.ceiling =
      this.policy.maxExtraLoad === undefined
        ? undefined
        : new ExtraLoadCeiling({ ...options.ceiling, maxExtraLoad: this.policy.maxExtraLoad });
    this.#observer = options.observer ?? {};
    this.#nodeId = options.nodeId ?? "local";
    this.#settleTimeoutMs = options.settleTimeoutMs ?? 5_000;
  }

  stats(): Out.HedgeStats {
    return {
      fanouts: this.#fanouts,
      primaries: this.#primaries,
      issued: this.#issued,
      won: this.#won,
      lost: this.#lost,
      unlandable: this.#unlandable,
      refused: { ...this.#refused },
    };
  }

  async run(task: Task, run: ReplicatedRun): Promise<Out.HedgedOutcome> {
    const clock = this.#clock;
    const start = clock.now();
    const { replicas, k, budgetMs } = run;
    checkRun(task, run);
    if (run.signal?.aborted) throw new TailswarmError("ABORTED", "hedged fan-out: options.signal aborted");
    const fanoutId = nanoid();
    const deadline = start + budgetMs;
    this.#fanouts++;
    this.#primaries += k;
    const stamp = this.ceiling?.start(start, k);
    const spares = replicas.slice(k);
    const set = new BranchSet<unknown>({
      transport: this.#transport,
      clock,
      book: this.#book,
      model: REPLICA_MODEL,
      fanoutId,
      origin: this.#nodeId,
      hop: run.hop ?? 0,
      deadline,
      task,
      requirement: { kind: "quorum", k },
    });
    const decisions: Out.HedgeDecisionRecord[] = [];
    const backups: { record: Omit<Out.BackupRecord, "won">; branch: Branch<unknown> }[] = [];
    const watched: Watched[] = [];
    let expired = false;
    let aborted = false;
    const deadlineTimer = clock.setTimer(() => {
      expired = true;
      set.wake();
    }, budgetMs);
    const onAbort = (): void => {
      aborted = true;
      set.wake();
    };
    run.signal?.addEventListener("abort", onAbort, { once: true });

    set.issue(replicas.slice(0, k));
    for (const b of set.branches) watched.push({ branch: b, retryAt: start });
    let checkTimer: { cancel(): void } | undefined;
    const policy = this.policy;
    const ceiling = this.ceiling;
    try {
      while (!expired && !aborted && set.answers.size < k && set.outstanding().length > 0) {
        const now = clock.now();
        for (let i = 0; i < watched.length && spares.length > 0;) {
          const w = watched[i] as Watched;
          if (w.branch.result !== undefined) {
            watched.splice(i, 1);
            continue;
          }
          if (w.retryAt > now) {
            i++;
            continue;
          }
          const ask = (backup: PeerId): HedgeDecision =>
            decideBackup({
              policy,
              now,
              deadline,
              primary: w.branch.peer,
              primaryIssuedAt: w.branch.issuedAt,
              primaryEstimate: this.#book.estimate(w.branch.peer, now),
              backup,
              backupEstimate: this.#book.estimate(backup, now),
              cdf: (peer, t) => this.#book.cdf(peer, t, now),
              ledgerCostMs: this.ledger.expectedAbandonCostMs(1, now),
              ceilingAdmits: () =>
                ceiling === undefined || (stamp !== undefined && ceiling.admit(stamp, now)),
            });
          // A refusal about the spare itself (its estimate, or a p99 too long to land) leaves the next
          // spare in the router's order to ask; the first other decision is the one acted on.
          const refusedSpares: { backup: PeerId; decision: HedgeDecision }[] = [];
          let j = 0;
          let decision = ask(spares[0] as PeerId);
          while (
            decision.action === "refuse" &&
            SPARE_REFUSALS.has(decision.reason) &&
            j + 1 < spares.length
          ) {
            refusedSpares.push({ backup: spares[j] as PeerId, decision });
            decision = ask(spares[++j] as PeerId);
          }
          const backup = spares[j] as PeerId;
          if (decision.action === "wait") {
            w.retryAt = decision.retryAt ?? now;
            i++;
            continue;
          }
          watched.splice(i, 1);
          if (decision.action === "refuse")
            for (const r of refusedSpares)
              this.#decided(decisions, fanoutId, w.branch.peer, r.backup, now - start, r.decision);
          this.#decided(decisions, fanoutId, w.branch.peer, backup, now - start, decision);
          if (decision.action === "refuse") continue;
          spares.splice(j, 1);
          set.issue([backup]);
          const branch = set.branches[set.branches.length - 1] as Branch<unknown>;
          const landable = decision.landable === true;
          this.#issued++;
          if (!landable) this.#unlandable++;
          backups.push({
            branch,
            record: {
              peer: backup,
              backs: w.branch.peer,
              branchId: branch.branchId,
              sentAtMs: now - start,
              reason: decision.reason,
              landable,
            },
          });
          watched.push({ branch, retryAt: now });
        }
        checkTimer?.cancel();
        checkTimer = undefined;
        if (spares.length > 0) {
          let next = Infinity;
          for (const w of watched) if (w.branch.result === undefined && w.retryAt < next) next = w.retryAt;
          if (next < deadline) checkTimer = clock.setTimer(() => set.wake(), Math.max(0, next - clock.now()));
        }
        await set.changed();
      }
    } finally {
      checkTimer?.cancel();
      deadlineTimer.cancel();
      run.signal?.removeEventListener("abort", onAbort);
      set.close();
      if (aborted) set.abandonOutstanding("caller aborted", "caller");
      else if (expired) set.abandonOutstanding("hedged fan-out deadline", "deadline");
      else set.abandonOutstanding("a replica answered", "decided");
    }
    const now = clock.now();
    const ctx: RecordContext = {
      mode: "speculate",
      requirementMet: set.answers.size >= k,
      decisionRelevant: new Set(),
      now,
    };
    const backupRecords: Out.BackupRecord[] = backups.map(({ record, branch }) => {
      const won = branch.inTime;
      if (won) this.#won++;
      else this.#lost++;
      return { ...record, won };
    });
    watchUnsettled(set, clock, deadline, this.#settleTimeoutMs);
    const settled = set.settled().then((): Out.HedgedSettlement => {
      const branches = set.branches.map((b) => branchRecord(b, ctx));
      this.ledger.recordFanout({ mode: "speculate", now: clock.now(), branches });
      const settlement = { branches, abandonCostMs: branches.reduce((s, r) => s + r.lostWorkMs, 0) };
      safely(() => this.#observer.onHedgedFanoutSettled?.(fanoutId, settlement));
      return settlement;
    });
    if (aborted)
      throw new TailswarmError(
        "ABORTED",
        "hedged fan-out: options.signal aborted; every branch was abandoned",
      );
    const outcome: Out.HedgedOutcome = {
      fanoutId,
      policy: policy.name,
      k,
      replicas: replicas.length,
      primaries: replicas.slice(0, k),
      answers: new Map(set.answers),
      budgetMs,
      elapsedMs: now - start,
      deadlineMissed: set.answers.size < k,
      branches: set.branches.map((b) => branchRecord(b, ctx)),
      backups: backupRecords,
      decisions,
      settled,
    };
    safely(() => this.#observer.onHedgedFanoutEnd?.(outcome));
    return outcome;
  }

  #decided(
    decisions: Out.HedgeDecisionRecord[],
    fanoutId: string,
    primary: PeerId,
    backup: PeerId,
    atMs: number,
    decision: HedgeDecision,
  ): void {
    if (decision.action === "refuse")
      this.#refused[decision.reason] = (this.#refused[decision.reason] ?? 0) + 1;
    const record: Out.HedgeDecisionRecord = {
      fanoutId,
      policy: this.policy.name,
      primary,
      backup,
      atMs,
      decision,
    };
    decisions.push(record);
    safely(() => this.#observer.onHedgeDecision?.(record));
  }
}

function checkRun(task: Task, run: ReplicatedRun): void {
  if (typeof task !== "object" || task === null || typeof task.kind !== "string" || task.kind === "")
    throw invalid("hedged fan-out task.kind", task?.kind, "a non-empty string");
  const replicas = run?.replicas;
  if (!Array.isArray(replicas) || new Set(replicas).size !== replicas.length)
    throw invalid("hedged fan-out replicas", replicas, "distinct peer ids");
  if (!Number.isInteger(run.k) || run.k < 1 || run.k >= replicas.length)
    throw invalid("hedged fan-out k", run.k, `an integer >= 1 < ${replicas.length} (the replicas: r > k)`);
  if (!(typeof run.budgetMs === "number" && run.budgetMs > 0 && Number.isFinite(run.budgetMs)))
    throw invalid("hedged fan-out budgetMs", run.budgetMs, "a finite number > 0");
}

function safely(f: () => void): void {
  try {
    f();
  } catch {
    // an observer must not break the fan-out (HedgeObserver's contract)
  }
}
