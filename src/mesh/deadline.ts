/**
 * Deadline propagation across hops. gRPC carries deadlines as relative timeouts (`grpc-timeout`,
 * 1 ms resolution) that grpc-js turns into `Date.now()`-based epoch ms; the engine keeps deadlines
 * on its own `Clock`. Every conversion goes through a *remaining duration*, so clocks that differ
 * (another host, or `performance`-based time drifting from `Date`) never shift a deadline.
 *
 * A node that serves a call and fans out further gives its work `incoming − reserve` as the deadline
 * and its outgoing calls carry that smaller deadline; the subtree stops through chained AbortSignals
 * (see `chainAbort`), not through transport cancellation.
 */
import type { Clock } from "../clock/clock.js";

/** Anything with grpc-js's `getDeadline()` (server calls). */
export interface HasDeadline {
  getDeadline(): Date | number;
}

/** ms left until the call's gRPC deadline, measured on `Date.now()`; Infinity when it has none. */
export function remainingMs(call: HasDeadline): number {
  const d = call.getDeadline();
  const t = d instanceof Date ? d.getTime() : d;
  if (!Number.isFinite(t)) return Infinity;
  return t - Date.now();
}

/** The call's gRPC deadline expressed on `clock` (Infinity when none). */
export function incomingDeadline(call: HasDeadline, clock: Clock): number {
  const left = remainingMs(call);
  return left === Infinity ? Infinity : clock.now() + left;
}

/**
 * The deadline a node gives its own work for an incoming deadline: `incoming − reserveMs`, capped by
 * `cap` (both on the same clock). The reserve is the time the node keeps to send its reply.
 *
 * @example
 * // incoming call has 200 ms left, reserve 10 ms: the handler and its fan-out get 190 ms
 * const d = workDeadline(incomingDeadline(call, systemClock), 10);
 */
export function workDeadline(incoming: number, reserveMs: number, cap = Infinity): number {
  return Math.min(incoming - Math.max(0, reserveMs), cap);
}

/**
 * gRPC deadline (epoch ms on `Date.now()`, what grpc-js expects) for a logical deadline on `clock`,
 * extended by `graceMs` so that the peer's own reply at the logical deadline arrives before the
 * transport deadline fires (a transport deadline is a client-side RST_STREAM).
 */
export function grpcDeadlineFor(logicalDeadline: number, clock: Clock, graceMs: number): number {
  return Date.now() + (logicalDeadline - clock.now()) + Math.max(0, graceMs);
}

/** An AbortController that also aborts when any parent signal aborts; `dispose()` unhooks it. */
export interface ChainedAbort {
  readonly controller: AbortController;
  readonly signal: AbortSignal;
  abort(reason?: unknown): void;
  dispose(): void;
}

/**
 * Chains an AbortController to parent signals without leaking listeners (unlike `AbortSignal.any`
 * on Node 20, which keeps them until the parents are collected).
 */
export function chainAbort(...parents: (AbortSignal | undefined)[]): ChainedAbort {
  const controller = new AbortController();
  const hooked: AbortSignal[] = [];
  const dispose = (): void => {
    for (const p of hooked) p.removeEventListener("abort", onParent);
    hooked.length = 0;
  };
  function onParent(this: AbortSignal): void {
    dispose();
    controller.abort(this.reason);
  }
  for (const p of parents) {
    if (p === undefined) continue;
    if (p.aborted) {
      dispose();
      controller.abort(p.reason);
      break;
    }
    p.addEventListener("abort", onParent, { once: true });
    hooked.push(p);
  }
  return {
    controller,
    signal: controller.signal,
    abort(reason?: unknown) {
      dispose();
      controller.abort(reason);
    },
    dispose,
  };
}
