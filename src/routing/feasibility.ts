/**
 * Feasibility shared by every policy, applied before ranking: a peer at its admission limit is out, and
 * for a speculative branch a peer whose fresh p99 exceeds the remaining budget — or is unknown — is out
 * (the speculation rule of seed 000: unknown never speculates).
 */
import { TailswarmError } from "../errors.js";
import type { PeerView, RouteContext } from "./types.js";

/** Throws INVALID_ARGUMENT when a speculative context lacks what the rule needs. */
export function checkContext(ctx: RouteContext): void {
  if (ctx.speculative !== true) return;
  if (ctx.budgetMs === undefined || !Number.isFinite(ctx.budgetMs)) {
    throw new TailswarmError(
      "INVALID_ARGUMENT",
      `ctx.budgetMs is ${ctx.budgetMs}; a speculative route needs the remaining budget in ms`,
    );
  }
  if (ctx.p99Of === undefined) {
    throw new TailswarmError(
      "INVALID_ARGUMENT",
      "ctx.p99Of is missing; a speculative route needs fresh per-peer p99s",
    );
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
