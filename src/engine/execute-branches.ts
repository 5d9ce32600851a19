/**
 * Step 8 for the two modes that fan out. speculate: issue, run the continuation alongside, commit what
 * arrives by the deadline, stop once the outstanding answers cannot change the action (or the requirement
 * is met) and abandon the rest. synchronous: wait for the required answers or the deadline and use partial
 * results; it does not stop when the answers settle the action (that is what synchronous issue is, and it
 * pays no abandon cost), branches still out at the deadline end there ("late"), and a quorum's extra
 * branches are cancelled once it is met.
 *
 * A branch given up because the decision settled without it is abandoned, unless `measure(peer)` wants
 * the sample: then it runs on detached as a measurement branch. At the deadline a horizon-probe candidate
 * runs on as a probe (`probes.takeCut`) or is abandoned at once; a caller's abort abandons everything.
 * Always returns by the branch deadline plus `settleGraceMs`, whatever the transport does; the deadline
 * is checked at every branch end too, so a timer firing late on a busy loop does not stretch the wait.
 */
import type { Clock } from "../clock/clock.js";
import { sleep } from "../clock/clock.js";
import { TailswarmError } from "../errors.js";
import type { PeerId, Requirement } from "../estimate/types.js";
import { requiredAnswers } from "../estimate/types.js";
import type { DecisionModel } from "../decision/types.js";
import type { BranchSet } from "./branch-set.js";
import { probesToPassCut, stalledCut } from "./horizon-probes.js";
import type { FanoutOutcome } from "./outcome.js";

export interface ExecuteContext<Answer> {
  readonly clock: Clock;
  readonly set: BranchSet<Answer>;
  readonly mode: "speculate" | "synchronous";
  readonly peers: readonly PeerId[];
  readonly requirement: Requirement;
  readonly model: DecisionModel<Answer, unknown>;
  /**
   * Stop early once the outstanding answers cannot change the action. The coordinator sets it for a
   * speculation that was decision-relevant at step 6; otherwise the fan-out waits for its requirement.
   */
  readonly stopWhenDecided: boolean;
  /** Deadline the branches carry (epoch ms). */
  readonly deadline: number;
  readonly signal: AbortSignal | undefined;
  readonly continuation: ((signal: AbortSignal) => Promise<unknown>) | undefined;
  /** How long to wait for abandoned/late branches to report before deciding without them, ms. */
  readonly settleGraceMs: number;
  /**
   * Asked for each peer as its branch is issued: true makes the branch a measurement candidate (it gets
   * an abort signal of its own, see BranchSet). Only candidates can become measurement branches.
   * Default: none.
   */
  readonly candidate?: (peer: PeerId) => boolean;
  /**
   * Asked for each candidate branch about to be abandoned only because the decision is settled: true
   * keeps it running as a measurement branch. Default: never.
   */
  readonly measure?: (peer: PeerId) => boolean;
  /** Horizon probes (see HorizonProbes); default: none. */
  readonly probes?: {
    /** Asked as a branch is issued: true makes it a probe candidate (a longer deadline on the peer). */
    readonly candidate: (peer: PeerId) => boolean;
    /** Branches were cut at the deadline (each earns its share of a probe). */
    readonly cut: (n: number) => void;
    /**
     * Asked once for the candidates cut at the deadline: true at a peer's index keeps its branch running as
     * a probe. `stalled`: the cut was a stall of the caller (`stalledCut`); `wanted`: the probes that
     * place the fan-out's observation past its cut (`probesToPassCut`).
     */
    readonly takeCut: (peers: readonly PeerId[], stalled: boolean, wanted: number) => readonly boolean[];
  };
}

export interface ExecuteResult {
  readonly requirementMet: boolean;
  readonly aborted: boolean;
  readonly expired: boolean;
  readonly continuation: FanoutOutcome["continuation"];
}

type Settled = NonNullable<FanoutOutcome["continuation"]>;

export async function executeBranches<Answer>(ctx: ExecuteContext<Answer>): Promise<ExecuteResult> {
  const { clock, set, mode, peers, requirement, model, signal } = ctx;
  const issuedAt = clock.now();
  let expired = false;
  let aborted = false;
  let release: () => void = () => undefined;
  const stopped = new Promise<void>((resolve) => (release = resolve));
  // only a speculation's continuation needs a signal (an AbortSignal is not free: see BranchSet)
  const contController =
    mode === "speculate" && ctx.continuation !== undefined ? new AbortController() : undefined;
  const stop = (): void => {
    set.wake();
    release();
  };
  let lateMs = 0;
  const expire = (): true => {
    if (expired) return true;
    expired = true;
    lateMs = clock.now() - ctx.deadline;
    contController?.abort(new TailswarmError("DEADLINE_EXCEEDED", "fan-out deadline passed"));
    stop();
    return true;
  };
  const timer = clock.setTimer(expire, ctx.deadline - clock.now());
  const onAbort = (): void => {
    aborted = true;
    contController?.abort(signal?.reason);
    stop();
  };
  signal?.addEventListener("abort", onAbort, { once: true });

  const needed = requiredAnswers(requirement, peers.length);
  const requirementMet = (): boolean => set.answers.size >= needed;
  const decided = (): boolean => {
    const outstanding = set.outstanding();
    return (
      outstanding.length === 0 ||
      requirementMet() ||
      (ctx.stopWhenDecided && !model.canFlip(set.answers, outstanding))
    );
  };

  let continuation: Promise<Settled> | undefined;
  try {
    if (contController !== undefined && ctx.continuation !== undefined) {
      const run = ctx.continuation;
      const contSignal = contController.signal;
      continuation = Promise.resolve()
        .then(() => run(contSignal))
        .then(
          (value): Settled => ({ status: "fulfilled", value }),
          (reason: unknown): Settled => ({ status: "rejected", reason }),
        );
    }
    set.issue(peers, ctx.candidate, ctx.probes?.candidate);
    // the deadline is the earlier of the timer and the clock read at each change: on a busy event loop
    // the timer fires late, while the branches' ends keep waking the wait
    const due = (): boolean => expired || (clock.now() >= ctx.deadline && expire());
    while (!due() && !aborted && !decided()) await set.changed();
  } catch (error) {
    // A decision model that throws: stop the continuation and everything still out, then surface it.
    timer.cancel();
    signal?.removeEventListener("abort", onAbort);
    contController?.abort(error);
    set.close();
    set.abandonOutstanding("decision model failed", "error");
    throw error;
  } finally {
    set.close();
    if (aborted) set.abandonOutstanding("caller aborted", "caller");
    else if (expired) {
      const probes = ctx.probes;
      if (probes !== undefined) {
        const cut = set.branches.filter((b) => b.result === undefined && !b.abandonedByUs);
        probes.cut(cut.length);
        const stalled = stalledCut(cut.length, set.branches.length, lateMs, ctx.deadline - issuedAt);
        // a candidate carries a longer deadline to the peer: it runs on as a probe, or is stopped now
        const candidates = cut.filter((b) => b.probeCandidate);
        if (candidates.length > 0) {
          const kept = probes.takeCut(
            candidates.map((b) => b.peer),
            stalled,
            probesToPassCut(cut.length, needed - set.answers.size, candidates.length),
          );
          candidates.forEach((b, i) => {
            if (!(kept[i] === true && set.probe(b))) set.abandon(b, "fan-out deadline", "deadline");
          });
        }
      }
      // speculation gave up at the deadline; synchronous branches end by their own deadline ("late")
      if (mode === "speculate") set.abandonOutstanding("speculation deadline", "deadline");
    } else {
      const reason = mode === "speculate" ? "speculation decided" : "no longer needed";
      const measure = ctx.measure;
      for (const b of set.branches) {
        if (b.result !== undefined || b.abandonedByUs) continue;
        if (b.own === undefined || measure === undefined || !measure(b.peer) || !set.detach(b))
          set.abandon(b, reason, "decided");
      }
    }
  }
  const met = requirementMet();

  let result: Settled | undefined;
  if (continuation !== undefined && !aborted) {
    const pending: Settled = {
      status: "rejected",
      reason: new TailswarmError("DEADLINE_EXCEEDED", "continuation did not finish by the fan-out deadline"),
    };
    result = await Promise.race([continuation, stopped.then(() => pending)]);
  }
  timer.cancel();
  signal?.removeEventListener("abort", onAbort);

  if (set.unsettledAttached > 0) {
    const grace = new AbortController();
    await Promise.race([
      set.settledAttached(),
      sleep(clock, ctx.settleGraceMs, grace.signal).catch(() => undefined),
    ]);
    grace.abort();
  }
  // Late synchronous branches: the peer should already have stopped at its deadline; make sure.
  // (Measurement branches run on to their own deadline: the transport ends them there.)
  if (set.unsettledAttached > 0)
    for (const b of set.branches) if (b.result === undefined && !b.measurement) set.stop(b, "deadline");
  return { requirementMet: met, aborted, expired, continuation: result };
}
