/**
 * W3C trace context across the mesh, through the global propagator of @opentelemetry/api (a no-op
 * until the application installs an SDK). The library never installs one.
 */
import { context, propagation, ROOT_CONTEXT } from "@opentelemetry/api";
import type { Context, TextMapGetter } from "@opentelemetry/api";
import { Metadata } from "@grpc/grpc-js";

/**
 * The last context injected and the call metadata the propagator wrote for it. A fan-out that is not
 * sampled sends all its branches in one context (its own, non-recording), so the propagator runs, and
 * a `Metadata` is built, once per fan-out instead of once per branch: its branches share the object.
 * Sharing is safe because grpc-js copies a call's metadata when the call starts (`ResolvingCall.start`)
 * and writes only to its copies; tailswarm installs no client interceptor that could edit it first.
 * A propagator writes a function of the context only, and contexts are immutable; the root context is
 * never cached, so that a propagator installed or removed later is seen.
 */
let lastContext: Context | undefined;
let lastMetadata: Metadata | undefined;
/** What a call with no trace context sends (nothing written): one object for all of them. */
const EMPTY = new Metadata();

/**
 * The call metadata that carries `ctx` (default: the active context) through the global propagator:
 * the same object for the same context, and one empty object when the propagator writes nothing. The
 * caller must not modify it (pass it to grpc-js, which copies it).
 */
export function traceMetadata(ctx: Context = context.active()): Metadata {
  if (ctx === lastContext && lastMetadata !== undefined) return lastMetadata;
  const carrier: Record<string, string> = {};
  propagation.inject(ctx, carrier);
  let metadata = EMPTY;
  for (const key in carrier) {
    const value = carrier[key];
    if (value === undefined) continue;
    if (metadata === EMPTY) metadata = new Metadata();
    metadata.set(key, value);
  }
  if (ctx !== ROOT_CONTEXT) {
    lastContext = ctx;
    lastMetadata = metadata;
  }
  return metadata;
}

/** The part of grpc-js's `Metadata` the propagator reads (grpc-js `Metadata` satisfies it as is). */
export interface MetadataReader {
  get(key: string): (string | Buffer)[];
  getMap(): Record<string, string | Buffer>;
}

/**
 * Reads incoming metadata for the propagator: a key's value, or its values when it came more than once
 * (the W3C propagator takes the first `traceparent` and joins `tracestate` headers).
 */
export const metadataGetter: TextMapGetter<MetadataReader> = {
  keys: (md) => Object.keys(md.getMap()),
  get: (md, key) => {
    const values = md.get(key);
    if (values.length === 0) return undefined;
    return values.length === 1 ? text(values[0]!) : values.map(text);
  },
};

/** A metadata value as text (binary values, which the propagator's keys never are, as UTF-8). */
function text(v: string | Buffer): string {
  return typeof v === "string" ? v : v.toString("utf8");
}

/** Metadata, and the `traceparent` to read when it carries none (a request body's own field). */
interface WithFallback {
  readonly md: MetadataReader;
  readonly traceparent: string;
}

const fallbackGetter: TextMapGetter<WithFallback> = {
  keys: (c) => metadataGetter.keys(c.md),
  get: (c, key) => {
    const v = metadataGetter.get(c.md, key);
    return v === undefined && key === "traceparent" ? c.traceparent : v;
  },
};

/**
 * The context carried by an incoming call's metadata (ROOT_CONTEXT + nothing when none), or by
 * `fallbackTraceparent` when the metadata has no `traceparent`. The propagator reads the metadata
 * through a getter: on a peer this runs for every branch, so it builds no carrier and asks the
 * propagator for no list of fields.
 */
export function extractTraceContext(metadata: MetadataReader, fallbackTraceparent = ""): Context {
  return fallbackTraceparent === ""
    ? propagation.extract(ROOT_CONTEXT, metadata, metadataGetter)
    : propagation.extract(ROOT_CONTEXT, { md: metadata, traceparent: fallbackTraceparent }, fallbackGetter);
}
