/**
 * Options of `Coordinator.fanOut` and their validation. Every invalid option throws
 * `TailswarmError("INVALID_ARGUMENT")` naming the option, the value and what was expected.
 */
import { invalid } from "../errors.js";
import type { PeerId, Requirement } from "../estimate/types.js";
import type { DecisionModel } from "../decision/types.js";
import { DEFAULT_POLICY, isPolicyName } from "../policy/types.js";
import type { PolicyName } from "../policy/types.js";
import type { FanoutRouter } from "./fanout-router.js";

export interface FanoutOptions<Answer = unknown, Action = unknown> {
  /** Peers to send to (all of them, or the top `k` the router picks). */
  peers: readonly PeerId[];
  /** How many of the candidates to send to. Default: all. */
  k?: number;
  /** Which of the chosen peers must answer before the fan-out is decidable. Default all. */
  required?: Requirement;
  /** Absolute deadline, epoch ms on the coordinator's clock. Give this or `budgetMs`. */
  deadline?: number;
  /** Budget from now, ms (deadline = now + budgetMs). */
  budgetMs?: number;
  /** ms kept back from the budget for the coordinator's own decision after the branches. Default 0. */
  reserveMs?: number;
  model: DecisionModel<Answer, Action>;
  /** The local/cached decision used when the rule says degrade (or on a violation). */
  fallback?: () => Action;
  /** With no fallback, degrade to `model.decide(no answers)` (the model's prior) instead of throwing. */
  usePriorOnDegrade?: boolean;
  /** Default `DEFAULT_POLICY`, "p99-boundary" (the rule). */
  policy?: PolicyName;
  /** The caller gave up: abandons every branch and rejects with ABORTED. */
  signal?: AbortSignal;
  /** The coordinator's own speculative work, run alongside the branches in speculate mode. */
  continuation?: (signal: AbortSignal) => Promise<unknown>;
  /** Step 3. Default: the first `k` candidates. */
  router?: FanoutRouter;
  /** Hop of the incoming branch this fan-out serves; branches go out at parentHop + 1 (0 without one). */
  parentHop?: number;
}

export interface NormalizedOptions<Answer, Action> {
  readonly candidates: readonly PeerId[];
  readonly k: number;
  readonly required: Requirement | undefined;
  readonly deadline: number;
  readonly reserveMs: number;
  readonly model: DecisionModel<Answer, Action>;
  readonly fallback: (() => Action) | undefined;
  readonly usePriorOnDegrade: boolean;
  readonly policy: PolicyName;
  readonly signal: AbortSignal | undefined;
  readonly continuation: ((signal: AbortSignal) => Promise<unknown>) | undefined;
  readonly router: FanoutRouter | undefined;
  readonly hop: number;
}

/** Validates `options` at `now`; throws INVALID_ARGUMENT naming the first bad option. */
export function normalizeOptions<Answer, Action>(
  options: FanoutOptions<Answer, Action>,
  now: number,
): NormalizedOptions<Answer, Action> {
  if (typeof options !== "object" || options === null) bad("options", options, "an object");
  const candidates = options.peers;
  if (!Array.isArray(candidates) || candidates.length === 0)
    bad("peers", candidates, "a non-empty array of peer ids");
  const seen = new Set<PeerId>();
  for (const p of candidates) {
    if (typeof p !== "string" || p.length === 0) bad("peers[]", p, "non-empty strings");
    if (seen.has(p)) bad("peers", p, "distinct peer ids (duplicate)");
    seen.add(p);
  }
  const k = options.k ?? candidates.length;
  if (!Number.isInteger(k) || k < 1 || k > candidates.length) {
    bad("k", k, `an integer in [1, ${candidates.length}] (the number of candidates)`);
  }
  const required = options.required;
  if (required !== undefined) {
    if (required.kind === "quorum") {
      if (!Number.isInteger(required.k) || required.k < 1 || required.k > k) {
        bad("required.k", required.k, `an integer in [1, ${k}] (the peers fanned out to)`);
      }
    } else if (required.kind !== "all") {
      bad("required.kind", (required as { kind: unknown }).kind, '"all" or "quorum"');
    }
  }
  if (options.deadline !== undefined && options.budgetMs !== undefined) {
    bad("deadline", "(both deadline and budgetMs)", "one of deadline or budgetMs");
  }
  let deadline: number;
  if (options.deadline !== undefined) {
    if (typeof options.deadline !== "number" || Number.isNaN(options.deadline)) {
      bad("deadline", options.deadline, "an absolute time in epoch ms");
    }
    deadline = options.deadline;
  } else if (options.budgetMs !== undefined) {
    if (typeof options.budgetMs !== "number" || Number.isNaN(options.budgetMs)) {
      bad("budgetMs", options.budgetMs, "a number of ms");
    }
    deadline = now + options.budgetMs;
  } else {
    return bad("deadline", undefined, "a deadline (epoch ms) or a budgetMs");
  }
  if (deadline === Infinity) bad("deadline", deadline, "a finite time (an unbounded fan-out could hang)");
  const reserveMs = options.reserveMs ?? 0;
  if (typeof reserveMs !== "number" || !(reserveMs >= 0) || !Number.isFinite(reserveMs)) {
    bad("reserveMs", reserveMs, "a finite number >= 0");
  }
  const model = options.model;
  if (typeof model !== "object" || model === null || typeof model.canFlip !== "function") {
    bad("model", model, "a DecisionModel");
  }
  fn("fallback", options.fallback);
  fn("continuation", options.continuation);
  fn("router", options.router);
  const policy = options.policy ?? DEFAULT_POLICY;
  if (!isPolicyName(policy)) bad("policy", policy, "a PolicyName");
  const parentHop = options.parentHop;
  if (parentHop !== undefined && (!Number.isInteger(parentHop) || parentHop < 0)) {
    bad("parentHop", parentHop, "an integer >= 0");
  }
  return {
    candidates,
    k,
    required,
    deadline,
    reserveMs,
    model,
    fallback: options.fallback,
    usePriorOnDegrade: options.usePriorOnDegrade ?? false,
    policy,
    signal: options.signal,
    continuation: options.continuation,
    router: options.router,
    hop: parentHop === undefined ? 0 : parentHop + 1,
  };
}

function fn(field: string, value: unknown): void {
  if (value !== undefined && typeof value !== "function") bad(field, value, "a function");
}

function bad(field: string, value: unknown, expected: string): never {
  throw invalid(`fanOut option ${field}`, value, expected);
}
