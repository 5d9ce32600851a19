/** Contract of the engine's results and of its observer hook (telemetry, flight recorder, testbed). */
import type { FanoutEstimate, PeerId } from "../estimate/types.js";
import type { Classification } from "../policy/types.js";
import type { BranchResult } from "./transport.js";

/**
 * How a branch ended, from the coordinator's point of view:
 * - committed: its answer arrived in time and was used;
 * - partial: synchronous mode, the answer arrived and was used as part of a partial result;
 * - abandoned: cancelled by the coordinator (speculation gave up on it), peer work lost — or, with
 *   `measurement: true`, given up by the decision but left running so its latency is learnt (no work lost);
 * - late: the deadline passed first;
 * - failed: no usable answer (peer down, error, malformed answer).
 */
export type BranchOutcome = "committed" | "partial" | "abandoned" | "late" | "failed";

export interface BranchRecord {
  readonly peer: PeerId;
  readonly branchId: string;
  readonly outcome: BranchOutcome;
  /** Deadline the branch carried (epoch ms). */
  readonly deadline: number;
  /** ms from issue to end (answer, abandon or deadline). */
  readonly latencyMs: number;
  /** Peer work lost (abandoned or late), ms; 0 otherwise (and 0 for a measurement branch). */
  readonly lostWorkMs: number;
  /** Leave-one-out: removing this answer changes the action. False for branches without an answer. */
  readonly decisionRelevant: boolean;
  readonly result: BranchResult;
  /**
   * The transport had not reported when the fan-out decided (abandoned or past its deadline): the
   * result is a placeholder and lostWorkMs is 0 here. The settled record reaches the observer (and the
   * abandon ledger) when it arrives.
   */
  readonly unsettled?: boolean;
  /**
   * A measurement branch: the decision was settled without it (outcome `abandoned`, answer not used),
   * but nobody stopped it — it ran on to its answer or deadline so that the peer's latency estimate gets a
   * sample (see `CoordinatorOptions.explorationRate`). Not charged as lost work, nor to the abandon ledger.
   */
  readonly measurement?: true;
  /** Measurement branches: the peer's service ms spent on it (answer or deadline), the price of the sample. */
  readonly measurementWorkMs?: number;
  /**
   * A horizon probe: cut at the deadline for the caller (outcome `abandoned`, answer discarded), left
   * running on the peer so that its late completion time is learnt (see `HorizonProbes`). Never charged.
   */
  readonly probe?: true;
  /** Horizon probes: the peer's service ms spent on it. */
  readonly probeWorkMs?: number;
}

export interface FanoutOutcome<Action = unknown> {
  readonly fanoutId: string;
  readonly classification: Classification;
  readonly estimate: FanoutEstimate;
  /** The action taken, and the local/prior action it would have been with no answers. */
  readonly action: Action;
  readonly priorAction: Action;
  readonly decisionChanged: boolean;
  /** True when the caller's fallback decided (degrade). */
  readonly degraded: boolean;
  readonly branches: readonly BranchRecord[];
  /** Answers the final action rests on (committed or partial). */
  readonly answered: number;
  /** Sum of lostWorkMs over the branches: the abandon cost actually paid (measurement branches add 0). */
  readonly abandonCostMs: number;
  /** Bits per committed/partial answer (null when none). */
  readonly infoGainPerCommitted: number | null;
  /** Time from start to decision, ms; and whether the decision came after the deadline. */
  readonly elapsedMs: number;
  /** From the fan-out's start to its mode chosen (step 7), ms: the rest of `elapsedMs` is the wait. */
  readonly decidedMs?: number;
  readonly deadlineMissed: boolean;
  /** A SpeculationBudgetViolation met on the way (budget <= 0, p99 < p50), turned into degrade. */
  readonly violation?: { readonly code: string; readonly message: string };
  /** Speculate mode with a continuation: how the coordinator's own speculative work ended. */
  readonly continuation?:
    | { readonly status: "fulfilled"; readonly value: unknown }
    | { readonly status: "rejected"; readonly reason: unknown };
}

/**
 * A fan-out that sent branches and had no answer to decide with (every branch cut or failed), and was
 * not degraded: its action can only be the decision model's prior. The node replies with it, marked
 * `no_answer`, and telemetry counts it.
 */
export function answeredByNone(o: FanoutOutcome): boolean {
  return !o.degraded && o.answered === 0 && o.branches.length > 0;
}

/**
 * Hooks the engine calls; every method is optional and must not throw (errors are swallowed and
 * reported once through `onError`). Telemetry, the flight recorder and the testbed implement this.
 */
export interface FanoutObserver {
  onDecision?(fanoutId: string, classification: Classification, estimate: FanoutEstimate): void;
  onBranchEnd?(fanoutId: string, record: BranchRecord): void;
  onFanoutEnd?(outcome: FanoutOutcome): void;
  /** A SpeculationBudgetViolation, whether it was turned into degrade or thrown to the caller. */
  onViolation?(fanoutId: string, violation: Error): void;
  onError?(error: unknown): void;
}
