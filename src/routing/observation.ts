/**
 * Learn-MABP's observation of one answered branch: the primitives `w, p, P` of the action the peer
 * served, and the compatibility signature they were served at. Pure: the node feeds it the task and the
 * transport's result (src/node/routing-setup.ts).
 *
 * A `context` answer (src/peers/context-worker.ts) is keyed at the task's memory object on a hit and at
 * `NO_MEMORY` on a miss; its work is the memory stage's units (`stageWork`, else `work`), its penalty
 * what it reports or else that work, and each downstream job a successor on the next stage's queue.
 * Any other answer is a unit of work without memory: the service time in ms, penalty 0, no successors.
 * Failed, refused, abandoned and expired branches are not observations.
 */
import { queueKey } from "./commodity.js";
import type { ObservedOutcome } from "./learned-primitives.js";
import { NO_MEMORY } from "./signature.js";
import type { RouteTask } from "./types.js";

/** One observation for `LearnedPrimitives.observe(peer, key, compat, outcome)`. */
export interface BranchObservation {
  readonly key: string;
  readonly compat: number;
  readonly outcome: ObservedOutcome;
}

/** Most downstream jobs one answer counts (a bound on what a peer's reply can claim). */
const MAX_SUCCESSORS = 16;

interface ContextLikeAnswer {
  readonly hit: boolean;
  readonly work: number;
  readonly downstream: number;
  readonly stageWork?: number;
  readonly penalty?: number;
}

function isContextAnswer(a: unknown): a is ContextLikeAnswer {
  if (typeof a !== "object" || a === null) return false;
  const r = a as Record<string, unknown>;
  return typeof r.hit === "boolean" && typeof r.work === "number" && typeof r.downstream === "number";
}

function finiteOr(v: unknown, fallback: number): number {
  return typeof v === "number" && Number.isFinite(v) ? v : fallback;
}

/**
 * The observation in `answer` (served in `serviceMs`) of the routed `task`, or undefined when the answer
 * says nothing usable (no positive work).
 *
 * @example
 * const o = observeAnswer(contextRouteTask(req.task.payload), result.answer, result.serviceMs);
 * if (o !== undefined) learned.observe(peer, o.key, o.compat, o.outcome);
 */
export function observeAnswer(
  task: RouteTask,
  answer: unknown,
  serviceMs: number,
): BranchObservation | undefined {
  const key = task.commodity.queueKey;
  if (isContextAnswer(answer)) {
    const work = finiteOr(answer.stageWork, finiteOr(answer.work, 0));
    if (!(work > 0)) return undefined;
    const sig = task.signature ?? NO_MEMORY;
    const compat = answer.hit && sig !== NO_MEMORY ? sig >>> 0 : NO_MEMORY;
    const next = queueKey(task.commodity.requestClass, task.commodity.stage + 1);
    const n = Math.min(MAX_SUCCESSORS, Math.max(0, Math.floor(finiteOr(answer.downstream, 0))));
    return {
      key,
      compat,
      outcome: { work, penalty: finiteOr(answer.penalty, work), successors: new Array<string>(n).fill(next) },
    };
  }
  if (!(serviceMs > 0) || !Number.isFinite(serviceMs)) return undefined;
  return { key, compat: NO_MEMORY, outcome: { work: serviceMs, penalty: 0, successors: [] } };
}
