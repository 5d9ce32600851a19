/**
 * Feasibility shared by every policy, applied before ranking: a peer at its admission limit is out, and
 * for a speculative branch a peer whose fresh p99 exceeds the remaining budget — or is unknown — is out
 * (the founding note's speculation rule, docs/background.md: unknown never speculates).
 */
import { invalid } from "../errors.js";
import type { PeerView, RouteContext } from "./types.js";

/** Throws INVALID_ARGUMENT when a speculative context lacks what the rule needs. */
export function checkContext(ctx: RouteContext): void {
  if (ctx.speculative !== true) return;
  if (ctx.budgetMs === undefined || !Number.isFinite(ctx.budgetMs)) {
    throw invalid("ctx.budgetMs", ctx.budgetMs, "the remaining budget in ms (a speculative route needs it)");
  }
  if (ctx.p99Of === undefined) {
    throw invalid("ctx.p99Of", undefined, "fresh per-peer p99s (a speculative route needs them)");
  }
}

/** True when `peer` may receive the unit; `reserved` is what this router has booked on it. */
export function isFeasible(peer: PeerView, reserved: number, ctx: RouteContext): boolean {
  if (peer.backlog + reserved >= (peer.maxBacklog ?? Infinity)) return false;
  if (ctx.speculative === true) {
    const p99 = ctx.p99Of!(peer.id);
    // NaN and undefined fail this comparison: unknown is infeasible.
    if (!(p99 !== undefined && p99 <= ctx.budgetMs!)) return false;
  }
  return true;
}
