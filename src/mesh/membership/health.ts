/**
 * Peer health from the traffic a node already has: each branch outcome is reported here, and a peer
 * whose branches fail (`failed`), whose answers the decision model rejects (`rejected`) or whose
 * latency is an outlier `failureThreshold` times in a row is ejected from fan-outs for a backoff
 * (`baseEjectionMs` × 2^(ejections − 1), capped at `maxEjectionMs`). When that expires the peer is on
 * probation: its next branch either returns it (success) or ejects it again with the longer backoff.
 *
 * A latency is an outlier when it exceeds `outlierFactor` × the peer's own fresh p99 (a sudden turn
 * for the worse) or `outlierFactor` × the median p99 of the peers reported on (a chronically slow
 * peer); p99s come from `p99Of` (the LatencyBook's, NaN when not known) and an unknown p99 never makes
 * an outlier. At most `maxEjectedPercent` of those peers are ejected at once (at least one): past it
 * a failing peer stays in and the refusal is reported, so a swarm-wide fault cannot empty fan-outs.
 */
import type { BranchRecord, FanoutObserver } from "../../engine/outcome.js";
import type { PeerId } from "../../estimate/types.js";
import { checkRange, intRange, numberAbove, numberRange } from "../../util/range.js";
import type { NumberRange } from "../../util/range.js";

/**
 * What one branch said about its peer. `used`: the branch carried a request but says nothing of the
 * peer's health (cut at its deadline, or abandoned by us), so the peer is in use, not idle.
 */
export type HealthReport =
  | { readonly kind: "ok"; readonly latencyMs: number }
  | { readonly kind: "failed" }
  | { readonly kind: "rejected" }
  | { readonly kind: "used" };

export type HealthCause = "failed" | "rejected" | "outlier";

export interface HealthOptions {
  readonly failureThreshold?: number;
  readonly outlierFactor?: number;
  readonly maxEjectedPercent?: number;
  readonly baseEjectionMs?: number;
  readonly maxEjectionMs?: number;
  /** The peer's fresh p99, ms (NaN when not known). */
  readonly p99Of?: (peer: PeerId) => number;
}

type Key = Exclude<keyof HealthOptions, "p99Of">;

export const HEALTH_DEFAULTS: Readonly<Record<Key, number>> = {
  failureThreshold: 3,
  outlierFactor: 5,
  maxEjectedPercent: 20,
  baseEjectionMs: 10_000,
  maxEjectionMs: 300_000,
};

export const HEALTH_RANGES: Readonly<Record<Key, NumberRange>> = {
  failureThreshold: intRange(1, 1_000),
  outlierFactor: numberAbove(1, 1_000),
  maxEjectedPercent: numberRange(0, 100),
  baseEjectionMs: intRange(1),
  maxEjectionMs: intRange(1),
};

/**
 * The median p99 is read afresh at most this often, ms (and whenever the set of peers changes). It
 * moves with estimator windows of seconds; read for every answered branch it cost n² p99 reads per
 * fan-out of n (1,600 at 40 peers, a sixth of a coordinator's allocation in a testbed profile).
 */
export const MEDIAN_P99_REFRESH_MS = 100;

export interface EjectionEvent {
  readonly peer: PeerId;
  readonly cause: HealthCause;
  /** Times this peer has been ejected (this one included). */
  readonly ejections: number;
  /** Until when it is out, epoch ms. */
  readonly untilMs: number;
}

export interface HealthStats {
  readonly ejected: number;
  readonly ejections: number;
  readonly returns: number;
  /** Ejections refused because `maxEjectedPercent` of the peers were already out. */
  readonly refused: number;
}

interface PeerState {
  consecutive: number;
  lastCause: HealthCause;
  ejections: number;
  untilMs: number;
  /** Ejected and not yet returned (out, or on probation once `untilMs` passed). */
  out: boolean;
  /** When its last branch outcome was reported, and its last bad branch, epoch ms. */
  lastMs: number;
  lastBadBranchMs: number;
}

export class PeerHealth {
  readonly #o: Readonly<Record<Key, number>>;
  readonly #p99Of: (peer: PeerId) => number;
  readonly #peers = new Map<PeerId, PeerState>();
  #ejections = 0;
  #returns = 0;
  #median = NaN;
  /** When the median was read; −Infinity: read it afresh (the set of peers changed). */
  #medianAtMs = -Infinity;
  #refused = 0;
  onEject: ((e: EjectionEvent) => void) | undefined;
  onReturn: ((peer: PeerId, ejections: number) => void) | undefined;
  /** An ejection refused by `maxEjectedPercent` (the peer stays in). */
  onRefused: ((peer: PeerId, cause: HealthCause) => void) | undefined;
  /** A peer in good standing had a bad branch: the first of a run (a probe now says more, sooner). */
  onSuspect: ((peer: PeerId) => void) | undefined;

  constructor(options: HealthOptions = {}) {
    const o = {} as Record<Key, number>;
    for (const k of Object.keys(HEALTH_DEFAULTS) as Key[]) {
      o[k] = checkRange(`health.${k}`, options[k] ?? HEALTH_DEFAULTS[k], HEALTH_RANGES[k]);
    }
    this.#o = o;
    this.#p99Of = options.p99Of ?? (() => NaN);
  }

  /**
   * What a branch (or, with `probe`, an active probe: only ever a failure) said of `peer`. A failed
   * probe counts toward ejection like a failed branch but is no branch outcome: the peer stays idle.
   */
  report(peer: PeerId, report: HealthReport, nowMs: number, probe = false): void {
    const s = this.#state(peer);
    if (!probe) s.lastMs = nowMs;
    if (report.kind === "used") return; // its standing is unchanged
    const cause =
      report.kind === "ok"
        ? this.#outlier(peer, report.latencyMs, nowMs)
          ? "outlier"
          : undefined
        : report.kind;
    if (cause === undefined) {
      s.consecutive = 0;
      if (s.out && nowMs >= s.untilMs) {
        s.out = false;
        this.#returns++;
        this.onReturn?.(peer, s.ejections);
      }
      return;
    }
    s.consecutive++;
    s.lastCause = cause;
    if (!probe) s.lastBadBranchMs = nowMs;
    if (s.consecutive === 1 && !s.out) this.onSuspect?.(peer);
    if (s.out) {
      // On probation (its ejection expired): one more bad branch sends it back out.
      if (nowMs >= s.untilMs) this.#eject(peer, s, cause, nowMs);
      return;
    }
    if (s.consecutive >= this.#o.failureThreshold) this.#eject(peer, s, cause, nowMs);
  }

  /** The peer may be sent branches: never ejected, returned, or on probation. */
  admits(peer: PeerId, nowMs: number): boolean {
    const s = this.#peers.get(peer);
    return s === undefined || !s.out || nowMs >= s.untilMs;
  }

  /**
   * Whether branch outcomes say too little of the peer for it to go without an active probe: none
   * reported for `idleMs` (idle), or it is suspected (its last branch was bad, or it is ejected or on
   * probation). A peer in steady use answers for itself.
   */
  needsProbe(peer: PeerId, nowMs: number, idleMs: number): boolean {
    const s = this.#peers.get(peer);
    if (s === undefined) return true;
    return this.suspected(peer) || nowMs - s.lastMs >= idleMs;
  }

  /** Its last branch was bad, or it is ejected or on probation. */
  suspected(peer: PeerId): boolean {
    const s = this.#peers.get(peer);
    return s !== undefined && (s.out || s.consecutive > 0);
  }

  /** When the peer's last bad branch (failed, rejected or outlier) was reported, epoch ms; −Infinity if none. */
  lastBadBranchMs(peer: PeerId): number {
    return this.#peers.get(peer)?.lastBadBranchMs ?? -Infinity;
  }

  /** `peers` without those ejected now (order kept). */
  filter(peers: readonly PeerId[], nowMs: number): PeerId[] {
    return peers.filter((p) => this.admits(p, nowMs));
  }

  /** Peers out of fan-outs now, sorted. */
  ejected(nowMs: number): PeerId[] {
    return [...this.#peers.keys()].filter((p) => !this.admits(p, nowMs)).sort();
  }

  forget(peer: PeerId): void {
    if (this.#peers.delete(peer)) this.#medianAtMs = -Infinity;
  }

  stats(nowMs: number): HealthStats {
    return {
      ejected: this.ejected(nowMs).length,
      ejections: this.#ejections,
      returns: this.#returns,
      refused: this.#refused,
    };
  }

  #state(peer: PeerId): PeerState {
    let s = this.#peers.get(peer);
    if (s === undefined) {
      s = {
        consecutive: 0,
        lastCause: "failed",
        ejections: 0,
        untilMs: 0,
        out: false,
        lastMs: -Infinity,
        lastBadBranchMs: -Infinity,
      };
      this.#peers.set(peer, s);
      this.#medianAtMs = -Infinity;
    }
    return s;
  }

  #eject(peer: PeerId, s: PeerState, cause: HealthCause, nowMs: number): void {
    const outNow = [...this.#peers.values()].filter((x) => x.out && nowMs < x.untilMs).length;
    const allowed = Math.max(1, Math.floor((this.#peers.size * this.#o.maxEjectedPercent) / 100));
    if (!s.out && outNow >= allowed) {
      this.#refused++;
      this.onRefused?.(peer, cause);
      return;
    }
    s.ejections++;
    s.out = true;
    s.consecutive = 0;
    s.untilMs = nowMs + Math.min(this.#o.maxEjectionMs, this.#o.baseEjectionMs * 2 ** (s.ejections - 1));
    this.#ejections++;
    this.onEject?.({ peer, cause, ejections: s.ejections, untilMs: s.untilMs });
  }

  #outlier(peer: PeerId, latencyMs: number, nowMs: number): boolean {
    const f = this.#o.outlierFactor;
    const own = this.#p99Of(peer);
    if (Number.isFinite(own) && own > 0 && latencyMs > f * own) return true;
    const median = this.#medianP99(nowMs);
    return Number.isFinite(median) && median > 0 && latencyMs > f * median;
  }

  /** The median of the known p99s of the peers reported on, read at most every MEDIAN_P99_REFRESH_MS. */
  #medianP99(nowMs: number): number {
    const age = nowMs - this.#medianAtMs;
    if (age >= 0 && age < MEDIAN_P99_REFRESH_MS) return this.#median;
    const xs: number[] = [];
    for (const p of this.#peers.keys()) {
      const x = this.#p99Of(p);
      if (Number.isFinite(x)) xs.push(x);
    }
    xs.sort((a, b) => a - b);
    const m = xs.length >> 1;
    this.#median = xs.length === 0 ? NaN : xs.length % 2 === 1 ? xs[m]! : (xs[m - 1]! + xs[m]!) / 2;
    this.#medianAtMs = nowMs;
    return this.#median;
  }
}

/**
 * What a branch record says about its peer: an answer is `ok` with its latency; an answer the model
 * rejected (`INVALID_ANSWER`) is `rejected`; a failure is `failed`. A branch cut at its deadline says
 * only that the peer was slower than that caller's budget, which the estimator records as censored:
 * it is no failure (ejecting for it would hide the very tail the rule must see), only `used` — as is a
 * branch we abandoned. Counted as no traffic, a peer whose branches all ran out of budget (a loaded
 * swarm) looked idle and was probed every round, which added to the load. NOT_FOUND ("I do not serve
 * this kind") is an honest answer about the request, not the peer: counting it would let any client get
 * honest peers ejected by asking for a kind they do not serve. Records still unsettled say nothing.
 */
export function healthReportOf(record: BranchRecord): HealthReport | undefined {
  if (record.unsettled === true) return undefined;
  const r = record.result;
  switch (r.kind) {
    case "answer":
      return { kind: "ok", latencyMs: record.latencyMs };
    case "failed":
      if (r.code === "NOT_FOUND") return undefined;
      return r.code === "INVALID_ANSWER" ? { kind: "rejected" } : { kind: "failed" };
    case "deadline":
    case "abandoned":
      return USED;
  }
}

const USED: HealthReport = Object.freeze({ kind: "used" });

/** The coordinator's observer that reports every settled branch to `health` (`healthReportOf`). */
export function healthObserver(health: PeerHealth, now: () => number): FanoutObserver {
  return {
    onBranchEnd(_fanoutId, record) {
      const report = healthReportOf(record);
      if (report !== undefined) health.report(record.peer, report, now());
    },
  };
}
