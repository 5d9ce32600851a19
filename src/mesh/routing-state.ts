/**
 * `RoutingState` on the wire ⇄ src/routing's `RoutingAdvert`, and where a server finds it: a handler
 * with a `routingState()` method (the shipped `context` worker has one).
 */
import type { RoutingAdvert } from "../routing/advert.js";
import type { HandlerRegistry, TaskHandler } from "./handler.js";
import type { RoutingState__Output } from "./gen/tailswarm/v1/RoutingState.js";

/** A handler that advertises routing state (queues per class, resident memory, budget, capacity). */
export interface RoutingAwareHandler extends TaskHandler {
  routingState(): RoutingAdvert;
}

export function isRoutingAware(h: TaskHandler | undefined): h is RoutingAwareHandler {
  return typeof (h as Partial<RoutingAwareHandler> | undefined)?.routingState === "function";
}

/** The first routing-aware handler of `handlers` (by kind), as a state source; undefined when none. */
export function routingSourceOf(handlers: HandlerRegistry): (() => RoutingAdvert) | undefined {
  for (const kind of handlers.kinds()) {
    const h = handlers.get(kind);
    if (isRoutingAware(h)) return () => h.routingState();
  }
  return undefined;
}

export function toWireRoutingState(a: RoutingAdvert): RoutingState__Output {
  const queues: Record<string, number> = {};
  for (const [k, v] of Object.entries(a.queues)) if (v > 0) queues[k] = Math.round(v);
  return {
    queues,
    signatures: a.signatures.map((s) => s >>> 0),
    memoryUsed: a.memoryUsed,
    memoryBudget: a.memoryBudget,
    capacity: a.capacity,
    maxBacklog: Math.max(0, Math.round(a.maxBacklog ?? 0)),
    stateAtUnixMs: a.stateAt,
    served: a.served ?? 0,
    hits: a.hits ?? 0,
    churn: a.churn ?? 0,
  };
}

/** The advert in a wire `RoutingState` (proto-loader fills defaults; numbers may arrive as strings). */
export function advertFromWire(w: RoutingState__Output): RoutingAdvert {
  const queues: Record<string, number> = {};
  for (const [k, v] of Object.entries(w.queues ?? {})) queues[k] = Number(v);
  return {
    queues,
    signatures: (w.signatures ?? []).map(Number),
    memoryUsed: Number(w.memoryUsed),
    memoryBudget: Number(w.memoryBudget),
    capacity: Number(w.capacity),
    maxBacklog: Number(w.maxBacklog),
    stateAt: Number(w.stateAtUnixMs),
    served: Number(w.served),
    hits: Number(w.hits),
    churn: Number(w.churn),
  };
}
