/**
 * W3C trace context across the mesh, through the global propagator of @opentelemetry/api (a no-op
 * until the application installs an SDK). The library never installs one.
 */
import { context, propagation, ROOT_CONTEXT } from "@opentelemetry/api";
import type { Context } from "@opentelemetry/api";
import type { Metadata } from "@grpc/grpc-js";

/** Injects the active context into `metadata`; returns the `traceparent` it wrote, or "". */
export function injectTraceContext(metadata: Metadata): string {
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  let traceparent = "";
  for (const key in carrier) {
    const value = carrier[key];
    if (value === undefined) continue;
    metadata.set(key, value);
    if (key === "traceparent") traceparent = value;
  }
  return traceparent;
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
