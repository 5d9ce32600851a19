/**
 * W3C trace context across the mesh, through the global propagator of @opentelemetry/api (a no-op
 * until the application installs an SDK). The library never installs one.
 */
import { context, propagation, ROOT_CONTEXT } from "@opentelemetry/api";
import type { Context } from "@opentelemetry/api";
import type { Metadata } from "@grpc/grpc-js";

/**
 * The last context injected and what the propagator wrote for it. A fan-out that is not sampled sends
 * all its branches in one context (its own, non-recording), so the propagator runs once per fan-out
 * instead of once per branch. A propagator writes a function of the context only, and contexts are
 * immutable; the root context is never cached, so that a propagator installed or removed later is seen.
 */
let lastContext: Context | undefined;
let lastEntries: readonly (readonly [string, string])[] = [];

/** Injects the active context into `metadata` (nothing for the root context). */
export function injectTraceContext(metadata: Metadata): void {
  const ctx = context.active();
  if (ctx !== lastContext) {
    const carrier: Record<string, string> = {};
    propagation.inject(ctx, carrier);
    const entries: [string, string][] = [];
    for (const key in carrier) {
      const value = carrier[key];
      if (value !== undefined) entries.push([key, value]);
    }
    lastEntries = entries;
    lastContext = ctx === ROOT_CONTEXT ? undefined : ctx;
  }
  for (const [key, value] of lastEntries) metadata.set(key, value);
}

/** The context carried by an incoming call's metadata (ROOT_CONTEXT + nothing when none). */
export function extractTraceContext(metadata: Metadata, fallbackTraceparent = ""): Context {
  const fields = propagation.fields();
  if (fields.length === 0 && fallbackTraceparent === "") return ROOT_CONTEXT;
  const carrier: Record<string, string> = {};
  for (const key of fields) {
    const v = metadata.get(key)[0];
    if (typeof v === "string") carrier[key] = v;
  }
  if (carrier["traceparent"] === undefined && fallbackTraceparent !== "") {
    carrier["traceparent"] = fallbackTraceparent;
  }
  return propagation.extract(ROOT_CONTEXT, carrier);
}
