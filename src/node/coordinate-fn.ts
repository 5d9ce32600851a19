/**
 * The node's `Coordinate`: a fan-out of the task to the live peers, with the caller's deadline (minus
 * the node's reserve, already applied by the mesh) as the budget and the decision model the request
 * names. With no live peer the node degrades to the model's prior at once (`decide`: mode `degrade`,
 * reason `no-live-peers`), and so it does with no budget (`non-positive-budget`: the reply reserve the
 * node wants takes the call's whole time left). A fan-out in which no peer answered by the deadline
 * answers with the model's prior in time, marked `noAnswer` (its mode and reason stay the rule's, true
 * to the numbers it decided with) — unless every peer refused the task as malformed or unserved, which
 * is the request's error; partial answers are an answer.
 */
import type { Coordinator } from "../engine/coordinator.js";
import { answeredByNone } from "../engine/outcome.js";
import type { BranchRecord } from "../engine/outcome.js";
import { clip, invalid, TailswarmError } from "../errors.js";
import { fromFanoutOutcome } from "../mesh/coordinate.js";
import type { CoordinateFn, CoordinateResult } from "../mesh/coordinate.js";
import { decide } from "../policy/decide.js";
import { isPolicyName, POLICY_NAMES } from "../policy/types.js";
import type { PolicyName } from "../policy/types.js";
import { decisionModel } from "./decision-model.js";
import type { Membership } from "../mesh/membership/membership.js";
import type { NodeRouting } from "./routing-setup.js";
import type { NodeHedging } from "./hedging.js";
import { fromHedgedOutcome } from "../mesh/coordinate-replicated.js";
import type { CoordinateContext, CoordinateRequest } from "../mesh/coordinate.js";

export interface CoordinateDeps {
  readonly coordinator: Coordinator;
  /** Live peer ids (src/mesh's Membership). */
  readonly peers: Pick<Membership, "live">;
  /** The node's routing (`routing.*` config): picks which live peers get a branch; absent = all of them. */
  readonly routing?: Pick<NodeRouting, "fanoutOptions">;
  readonly policy: PolicyName;
  readonly now: () => number;
  /** Replicated requests (any k of r replicas, hedged); absent: such a request is refused. */
  readonly hedging?: Pick<NodeHedging, "run">;
}

/**
 * When every branch was refused for the same client-side reason (a bad payload, a kind no peer
 * serves), the request itself is wrong: answer with that status rather than a decision from nothing.
 */
function rejectIfAllRefused(kind: string, branches: readonly BranchRecord[]): void {
  if (branches.length === 0) return;
  const codes = new Set<string>();
  let message = "";
  for (const b of branches) {
    if (b.result.kind !== "failed") return;
    codes.add(b.result.code);
    message ||= `peer ${clip(b.peer)}: ${clip(b.result.message, 400)}`;
  }
  const [code] = codes;
  if (codes.size !== 1) return;
  if (code === "INVALID_ARGUMENT") {
    throw new TailswarmError(
      "INVALID_ARGUMENT",
      `coordinate ${clip(kind)}: every peer refused the task (${message})`,
    );
  }
  if (code === "NOT_FOUND") {
    throw new TailswarmError(
      "UNKNOWN_TASK_KIND",
      `coordinate ${clip(kind)}: no live peer serves this kind (${message})`,
    );
  }
}

export function makeCoordinate(deps: CoordinateDeps): CoordinateFn {
  return async (req, ctx) => {
    if (req.replicated !== undefined) return replicated(deps, req, ctx);
    const policy = req.policy ?? deps.policy;
    if (!isPolicyName(policy)) throw invalid("policy", policy, `one of ${POLICY_NAMES.join(", ")}`);
    const model = decisionModel(req.decision, req.options, req.task);
    const peers = deps.peers.live();
    if (!Number.isInteger(req.required) || req.required < 0) {
      throw invalid("required", req.required, "an integer >= 0");
    }
    if (peers.length === 0 || !(ctx.budgetMs > 0)) {
      const start = deps.now();
      const c = decide({
        policy,
        budgetMs: ctx.budgetMs,
        estimate: { status: "unknown", p50Ms: NaN, p99Ms: NaN },
        abandonCostMs: 0,
        relevant: false, // no answer can come (or none in time) to change the action
        speculationFeasible: false,
        anyPeerLive: peers.length > 0,
        hasFallback: true, // the model's prior
      });
      const action = model.decide(new Map());
      const result: CoordinateResult = {
        action,
        mode: c.mode,
        reason: c.reason,
        fanoutId: "",
        fanoutP50Ms: c.fanoutP50Ms,
        fanoutP99Ms: c.fanoutP99Ms,
        committed: 0,
        abandoned: 0,
        failed: 0,
        late: 0,
        degraded: true,
        decisionChanged: false,
        elapsedMs: deps.now() - start,
        budgetMs: c.budgetMs,
        abandonCostMs: 0,
      };
      return result;
    }
    if (req.required > peers.length) {
      throw invalid("required", req.required, `at most the ${peers.length} live peers`);
    }
    return withCallerAbort(ctx.signal, async (signal) => {
      const outcome = await deps.coordinator.fanOut(req.task, {
        peers,
        ...deps.routing?.fanoutOptions(peers.length),
        ...(req.required > 0 && { required: { kind: "quorum", k: req.required } }),
        deadline: ctx.deadline,
        model,
        usePriorOnDegrade: true,
        policy,
        signal,
      });
      const result = fromFanoutOutcome(outcome);
      rejectIfAllRefused(req.task.kind, outcome.branches);
      // the prior, in time, beats an error; the reply says the action rests on no answer
      if (answeredByNone(outcome)) {
        return { ...result, action: outcome.priorAction, decisionChanged: false, noAnswer: true };
      }
      return result;
    });
  };
}

/**
 * Runs `f` with a signal that follows the caller's cancel or a forced shutdown, not the deadline: the
 * engine ends a fan-out at its deadline by itself (with what has answered).
 */
async function withCallerAbort<T>(caller: AbortSignal, f: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const abort = new AbortController();
  const onAbort = (): void => {
    if (!TailswarmError.is(caller.reason, "DEADLINE_EXCEEDED")) abort.abort(caller.reason);
  };
  caller.addEventListener("abort", onAbort, { once: true });
  try {
    return await f(abort.signal);
  } finally {
    caller.removeEventListener("abort", onAbort);
  }
}

/**
 * Any k of the request's replicas, hedged: the replicas must be live peers; the reply says
 * `deadline_missed` when fewer than k answered by the deadline (with the backups it sent, so a caller
 * can see which could not land), rather than failing.
 */
async function replicated(
  deps: CoordinateDeps,
  req: CoordinateRequest,
  ctx: CoordinateContext,
): Promise<CoordinateResult> {
  if (deps.hedging === undefined || req.replicated === undefined)
    throw new TailswarmError("INVALID_ARGUMENT", "replicated: this node does not run replicated requests");
  const hedging = deps.hedging;
  const spec = req.replicated;
  return withCallerAbort(ctx.signal, async (signal) => {
    const outcome = await hedging.run(req.task, spec, {
      live: deps.peers.live(),
      budgetMs: ctx.deadline - deps.now(),
      signal,
    });
    rejectIfAllRefused(req.task.kind, outcome.branches);
    return fromHedgedOutcome(outcome);
  });
}
