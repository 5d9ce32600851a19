/**
 * The branches of one fan-out while they are out: issue them, learn from every end at once (step 9's
 * latency samples, censored while in flight), collect the answers that arrive while the set is open,
 * and wake the coordinator whenever something changed. The transport is not trusted: a throw or a
 * rejection is a `failed` end, and a branch it never settles is ended by `forceSettle`.
 *
 * Every end teaches the latency book (the slow calls are the tail): an answer, in time or not, is a
 * sample; a deadline, or our abandon at it, is censored at the deadline; an earlier abandon is censored
 * at its age; a failure only stops the censoring. A `detach`ed measurement branch runs on to its answer
 * or deadline; a horizon `probe` carried a longer deadline, so its late answer is a sample (for the fan-out
 * observed too).
 *
 * The branches share one abort signal (an AbortSignal per branch was the engine's largest cost per
 * fan-out); only a measurement candidate gets its own, since it may be detached while the others are
 * abandoned. The shared signal aborts once every branch still out on it has been abandoned.
 */
import { setMaxListeners } from "node:events";
import { nanoid } from "nanoid";
import type { Clock } from "../clock/clock.js";
import type { DecisionModel } from "../decision/types.js";
import type { ObservedFanout } from "../estimate/observed-fanouts.js";
import type { InFlight, PeerId, Requirement } from "../estimate/types.js";
import type { LatencySource } from "../estimate/latency-source.js";
import type { BranchResult, PeerTransport, Task } from "./transport.js";

/** Why the coordinator abandoned a branch: it decides what the latency book learns from the abandon. */
export type AbandonCause = "deadline" | "decided" | "caller" | "error";

/**
 * An abandon this close to the branch's deadline (ms) counts as a timeout: the call did not answer within
 * (practically) its whole budget. 1 ms is the resolution of gRPC's `grpc-timeout`.
 */
export const DEADLINE_HAIR_MS = 1;

export interface Branch<Answer> {
  readonly peer: PeerId;
  readonly branchId: string;
  readonly issuedAt: number;
  readonly deadline: number;
  /** The branch's own abort controller (a measurement candidate); undefined: it is on the shared signal. */
  readonly own: AbortController | undefined;
  readonly inFlight: InFlight;
  result: BranchResult | undefined;
  endedAt: number | undefined;
  /** The parsed answer, when the result was an answer that parsed. */
  answer: { readonly value: Answer } | undefined;
  /** The answer arrived while the set was open, so the decision may use it. */
  inTime: boolean;
  /** The coordinator aborted this branch. */
  abandonedByUs: boolean;
  /** When and why the coordinator aborted it (undefined unless `abandonedByUs`). */
  abandonedAt: number | undefined;
  abandonCause: AbandonCause | undefined;
  /**
   * A measurement branch: the decision was settled without it, but instead of being abandoned it was
   * left to run to its answer or deadline so that its latency is learnt. Its answer is never used.
   */
  measurement: boolean;
  /** Issued as a horizon-probe candidate: the peer was given `probeDeadline` instead of `deadline`. */
  readonly probeCandidate: boolean;
  /** A horizon probe: cut at the deadline for the caller, left running to learn its latency (a measurement). */
  probe: boolean;
}

export interface BranchSetContext<Answer> {
  readonly transport: PeerTransport;
  readonly clock: Clock;
  readonly book: Omit<LatencySource, "peers">;
  readonly model: DecisionModel<Answer, unknown>;
  readonly fanoutId: string;
  readonly origin: string;
  readonly hop: number;
  /** Deadline every branch carries (epoch ms). */
  readonly deadline: number;
  readonly task: Task;
  /** What the fan-out needs of its peers (for the observed completion time). Default: all of them. */
  readonly requirement?: Requirement;
  /** Deadline a horizon-probe candidate carries to the peer (epoch ms, after `deadline`). */
  readonly probeDeadline?: number;
}

export class BranchSet<Answer> {
  /** Answers that arrived in time, in arrival order. */
  readonly answers = new Map<PeerId, Answer>();
  readonly branches: Array<Branch<Answer>> = [];
  /** Called for each branch that settles after `close()`. */
  onSettledAfterClose: ((branch: Branch<Answer>) => void) | undefined;
  readonly #ctx: BranchSetContext<Answer>;
  #open = true;
  /** The fan-out's own completion time, observed (`LatencySource.beginFanout`). */
  #observed: ObservedFanout | undefined;
  #startedAt = 0;
  #unsettled = 0;
  #unsettledMeasurements = 0;
  /** The signal of the branches without their own (created at the first issue that needs it). */
  #shared: AbortController | undefined;
  /** Branches on the shared signal still out and not abandoned: at 0 with one abandoned, it aborts. */
  #sharedLive = 0;
  /** Why the first branch on the shared signal was abandoned (or stopped); undefined: none was. */
  #sharedReason: string | undefined;
  #wake: (() => void) | undefined;
  #allSettled: (() => void) | undefined;
  #attachedSettled: (() => void) | undefined;

  constructor(ctx: BranchSetContext<Answer>) {
    this.#ctx = ctx;
  }

  get unsettled(): number {
    return this.#unsettled;
  }

  /** Branches not ended yet, measurement branches excluded (the ones the fan-out still waits on). */
  get unsettledAttached(): number {
    return this.#unsettled - this.#unsettledMeasurements;
  }

  get open(): boolean {
    return this.#open;
  }

  /**
   * Issues a branch to each peer. `candidate(peer)` true gives the branch a signal of its own, so that it
   * can later be `detach`ed as a measurement branch; the others share the fan-out's signal.
   */
  issue(
    peers: readonly PeerId[],
    candidate?: (peer: PeerId) => boolean,
    probeCandidate?: (peer: PeerId) => boolean,
  ): void {
    const { transport, clock, book, fanoutId, origin, hop, deadline, task } = this.#ctx;
    if (this.#shared?.signal.aborted === true) {
      // a later issue after the others were stopped: a fresh shared signal
      this.#shared = undefined;
      this.#sharedReason = undefined;
    }
    if (this.branches.length === 0 && peers.length > 0) {
      this.#startedAt = clock.now();
      this.#observed = book.beginFanout?.(peers, this.#ctx.requirement ?? ALL, this.#startedAt, deadline);
    }
    for (const peer of peers) {
      const issuedAt = clock.now();
      const pd = this.#ctx.probeDeadline;
      const asProbe = pd !== undefined && pd > deadline && probeCandidate?.(peer) === true;
      const own = asProbe || candidate?.(peer) === true ? new AbortController() : undefined;
      let signal: AbortSignal;
      if (own !== undefined) signal = own.signal;
      else {
        signal = (this.#shared ??= sharedController()).signal;
        this.#sharedLive++;
      }
      const branch: Branch<Answer> = {
        peer,
        branchId: nanoid(),
        issuedAt,
        deadline,
        own,
        inFlight: book.begin(peer, issuedAt, deadline),
        result: undefined,
        endedAt: undefined,
        answer: undefined,
        inTime: false,
        abandonedByUs: false,
        abandonedAt: undefined,
        abandonCause: undefined,
        measurement: false,
        probeCandidate: asProbe,
        probe: false,
      };
      this.branches.push(branch);
      this.#unsettled++;
      let call: Promise<BranchResult>;
      try {
        call = transport.branch(
          peer,
          {
            fanoutId,
            branchId: branch.branchId,
            task,
            origin,
            hop,
            deadline: asProbe ? pd : deadline,
          },
          { signal },
        );
      } catch (error) {
        call = Promise.reject(error);
      }
      call.then(
        (result) => this.#settle(branch, result),
        (error: unknown) =>
          this.#settle(branch, {
            kind: "failed",
            code: "TRANSPORT_ERROR",
            message: `transport rejected (it must not): ${error instanceof Error ? error.message : String(error)}`,
          }),
      );
    }
  }

  /** Peers whose branch has not ended yet. */
  outstanding(): PeerId[] {
    const out: PeerId[] = [];
    for (const b of this.branches) if (b.result === undefined) out.push(b.peer);
    return out;
  }

  /** Resolves at the next branch end or `wake()`. */
  changed(): Promise<void> {
    return new Promise((resolve) => {
      this.#wake = resolve;
    });
  }

  wake(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }

  /** Resolves when every branch has ended. */
  settled(): Promise<void> {
    if (this.#unsettled === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const previous = this.#allSettled;
      this.#allSettled = () => {
        previous?.();
        resolve();
      };
    });
  }

  /** Resolves when every branch but the measurement branches has ended. */
  settledAttached(): Promise<void> {
    if (this.unsettledAttached === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const previous = this.#attachedSettled;
      this.#attachedSettled = () => {
        previous?.();
        resolve();
      };
    });
  }

  /** Answers arriving from now on are not used. */
  close(): void {
    this.#open = false;
  }

  /**
   * Abandon one branch (abort its signal); the transport then settles it with the lost work. `cause` says
   * what the latency book learns (see the module comment). A measurement branch is not abandoned by a
   * settled decision, only by the deadline, a caller abort or an error; a horizon probe only by a caller
   * abort or an error. A branch on the shared signal is
   * stopped when the last branch on it still out is abandoned too (see the module comment).
   */
  abandon(branch: Branch<Answer>, reason: string, cause: AbandonCause): void {
    if (branch.result !== undefined || branch.abandonedByUs) return;
    if (branch.measurement && cause === "decided") return;
    if (branch.probe && cause === "deadline") return;
    branch.abandonedByUs = true;
    branch.abandonedAt = this.#ctx.clock.now();
    branch.abandonCause = cause;
    if (branch.own !== undefined) branch.own.abort(reason);
    else {
      this.#sharedReason ??= reason;
      this.#sharedLive--;
      this.#abortSharedWhenDone();
    }
  }

  /**
   * Stops a branch still out whatever it is (a late synchronous branch past its deadline): like
   * `abandon`, but not recorded as abandoned by us — the transport has the last word on how it ended.
   */
  stop(branch: Branch<Answer>, reason: string): void {
    if (branch.result !== undefined) return;
    if (branch.own !== undefined) branch.own.abort(reason);
    else {
      this.#sharedReason ??= reason;
      this.#shared?.abort(this.#sharedReason);
    }
  }

  /** The shared signal aborts once every branch on it that is still out has been abandoned. */
  #abortSharedWhenDone(): void {
    if (this.#sharedLive === 0 && this.#sharedReason !== undefined) this.#shared?.abort(this.#sharedReason);
  }

  abandonOutstanding(reason: string, cause: AbandonCause): void {
    for (const b of this.branches) this.abandon(b, reason, cause);
  }

  /**
   * Lets an outstanding branch run on as a measurement branch (after `close()`: its answer is not used).
   * It ends at its answer or its deadline like any branch, and is learnt from when it does. Only a branch
   * issued as a candidate (with its own signal) can be detached; false when it was not detached.
   */
  detach(branch: Branch<Answer>): boolean {
    if (branch.result !== undefined || branch.abandonedByUs || branch.measurement) return false;
    // on the shared signal it would keep the others from being stopped: only candidates are detached
    if (branch.own === undefined) return false;
    branch.measurement = true;
    this.#unsettledMeasurements++;
    return true;
  }

  /**
   * Lets a candidate branch cut at the deadline run on as a horizon probe: a measurement branch (the
   * fan-out does not wait for it, its answer is not used) whose late end the fan-out's own observed
   * completion time reads too (its exact latency, or a cut at its real age: `ObservedFanout`). False when
   * it was not a candidate or is no longer out.
   */
  probe(branch: Branch<Answer>): boolean {
    if (!branch.probeCandidate || !this.detach(branch)) return false;
    branch.probe = true;
    return true;
  }

  /** Ends a branch the transport never settled (a misbehaving transport), so the books stay whole. */
  forceSettle(branch: Branch<Answer>, result: BranchResult): void {
    this.#settle(branch, result);
  }

  #settle(branch: Branch<Answer>, result: BranchResult): void {
    if (branch.result !== undefined) return;
    const now = this.#ctx.clock.now();
    branch.result = result;
    branch.endedAt = now;
    this.#unsettled--;
    if (branch.measurement) this.#unsettledMeasurements--;
    if (branch.own === undefined && !branch.abandonedByUs) {
      this.#sharedLive--;
      this.#abortSharedWhenDone();
    }
    let invalid: string | undefined;
    if (result.kind === "answer") {
      try {
        branch.answer = { value: this.#ctx.model.parseAnswer(result.answer) };
      } catch (error) {
        invalid = error instanceof Error ? error.message : String(error);
      }
    }
    this.#learn(branch, endOf(branch, result, now), now, invalid === undefined);
    if (invalid !== undefined) branch.result = { kind: "failed", code: "INVALID_ANSWER", message: invalid };
    if (branch.answer !== undefined && this.#open && !branch.abandonedByUs) {
      branch.inTime = true;
      this.answers.set(branch.peer, branch.answer.value);
    }
    if (!this.#open) this.onSettledAfterClose?.(branch);
    this.wake();
    if (this.unsettledAttached === 0) {
      const attached = this.#attachedSettled;
      this.#attachedSettled = undefined;
      attached?.();
    }
    if (this.#unsettled === 0) {
      const all = this.#allSettled;
      this.#allSettled = undefined;
      all?.();
    }
  }

  /**
   * One end, read once, taught to the peer's estimate and to the fan-out's observed completion time. An
   * answer the model rejected (`valid` false) is the peer's latency all the same, but it never meets the
   * fan-out's requirement: for the fan-out that branch never answers.
   */
  #learn(branch: Branch<Answer>, end: LatencyEnd, now: number, valid: boolean): void {
    const observed = this.#observed;
    const start = this.#startedAt;
    if (branch.probe) {
      // A probe's late completion is a sample, an expired or stopped probe censored at its real age, for
      // the peer's estimate and the fan-out's observation alike. A probe that failed or answered what the
      // model rejects had not answered by then: the fan-out, cut already, is censored at that age too
      // (recording it as failed would drop a fan-out that missed its deadline from the set's estimate).
      if (end === "answer") {
        branch.inFlight.complete(now - branch.issuedAt);
        if (valid) observed?.answered(now, true);
        else observed?.ended("abandoned", now - start);
      } else if (end === "failed") {
        branch.inFlight.failed();
        observed?.ended("abandoned", now - start);
      } else {
        const at = branch.abandonedAt ?? now;
        branch.inFlight.abandoned(Math.max(0, at - branch.issuedAt));
        observed?.ended("abandoned", at - start);
      }
      return;
    }
    switch (end) {
      case "answer":
        branch.inFlight.complete(now - branch.issuedAt);
        if (valid) observed?.answered(now);
        else observed?.ended("failed", now - start);
        break;
      case "deadline":
        branch.inFlight.timedOut();
        observed?.ended("deadline", branch.deadline - start);
        break;
      case "abandoned": {
        const at = branch.abandonedAt ?? now;
        branch.inFlight.abandoned(Math.max(0, at - branch.issuedAt));
        observed?.ended("abandoned", at - start);
        break;
      }
      case "failed":
        branch.inFlight.failed();
        observed?.ended("failed", now - start);
        break;
    }
  }
}

/** How a branch ended, as the latency books read it (see the module comment). */
type LatencyEnd = "answer" | "deadline" | "abandoned" | "failed";

/** An abandon at (or within `DEADLINE_HAIR_MS` of) the deadline is a timeout: no answer in the whole budget. */
function endOf(branch: Branch<unknown>, result: BranchResult, now: number): LatencyEnd {
  if (result.kind !== "abandoned") return result.kind;
  const at = branch.abandonedAt ?? now;
  return branch.abandonCause === "deadline" || at >= branch.deadline - DEADLINE_HAIR_MS
    ? "deadline"
    : "abandoned";
}

const ALL: Requirement = { kind: "all" };

/**
 * The fan-out's shared controller. A transport may add one "abort" listener per branch to its signal
 * (MemoryTransport does): 40 branches are 40 listeners by design, not the leak Node warns about past 10.
 */
function sharedController(): AbortController {
  const c = new AbortController();
  setMaxListeners(0, c.signal);
  return c;
}
