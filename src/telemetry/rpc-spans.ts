/**
 * Client and server spans for the mesh's gRPC calls, following the current OpenTelemetry RPC semantic
 * conventions (gRPC): span name = fully-qualified method (`tailswarm.v1.Swarm/Branch`), kind CLIENT or
 * SERVER, `rpc.system.name` = "grpc", `rpc.method` = the fully-qualified method,
 * `rpc.response.status_code` = the status code's name ("OK", "DEADLINE_EXCEEDED"), `server.address`
 * and `server.port`, and `error.type` when the call failed. W3C trace context travels in gRPC metadata
 * (`traceparent`, `tracestate`) through the globally registered propagator.
 *
 * Records through @opentelemetry/api only; without an SDK every call here is a cheap no-op.
 */
import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import type { Context, Span, TextMapSetter, Tracer } from "@opentelemetry/api";
import { metadataGetter } from "../mesh/trace.js";
import type { MetadataReader } from "../mesh/trace.js";
import { ATTR_ERROR_TYPE, INSTRUMENTATION_SCOPE } from "./attributes.js";
import { unsampledSpan } from "./sampling-hints.js";
import type { SamplingHints } from "./sampling-hints.js";

export const ATTR_RPC_SYSTEM_NAME = "rpc.system.name";
export const ATTR_RPC_METHOD = "rpc.method";
export const ATTR_RPC_RESPONSE_STATUS_CODE = "rpc.response.status_code";
export const ATTR_SERVER_ADDRESS = "server.address";
export const ATTR_SERVER_PORT = "server.port";
export const ATTR_CLIENT_ADDRESS = "client.address";
export const ATTR_CLIENT_PORT = "client.port";

/** gRPC status codes by number (grpc-js `status`), as `rpc.response.status_code` wants them. */
const STATUS_NAMES = [
  "OK",
  "CANCELLED",
  "UNKNOWN",
  "INVALID_ARGUMENT",
  "DEADLINE_EXCEEDED",
  "NOT_FOUND",
  "ALREADY_EXISTS",
  "PERMISSION_DENIED",
  "RESOURCE_EXHAUSTED",
  "FAILED_PRECONDITION",
  "ABORTED",
  "OUT_OF_RANGE",
  "UNIMPLEMENTED",
  "INTERNAL",
  "UNAVAILABLE",
  "DATA_LOSS",
  "UNAUTHENTICATED",
] as const;

/** Server-side codes that mark a server span as an error (the gRPC semantic conventions' list). */
const SERVER_ERRORS = new Set([2, 4, 12, 13, 14, 15]);

/** Name of a gRPC status code, e.g. 4 → "DEADLINE_EXCEEDED". */
export function grpcStatusName(code: number): string {
  return STATUS_NAMES[code] ?? String(code);
}

/**
 * The part of grpc-js's `Metadata` the propagator needs, to read (the mesh's `MetadataReader`) and to
 * write (grpc-js `Metadata` satisfies it as is).
 */
export interface MetadataCarrier extends MetadataReader {
  set(key: string, value: string): void;
}

const setter: TextMapSetter<MetadataCarrier> = {
  set: (carrier, key, value) => carrier.set(key, value),
};

/** Writes the trace context of `ctx` (default: the active context) into outgoing metadata. */
export function injectTraceContext(metadata: MetadataCarrier, ctx: Context = context.active()): void {
  propagation.inject(ctx, metadata, setter);
}

/** Reads the caller's trace context from incoming metadata, on top of `base` (default: root). */
export function extractTraceContext(metadata: MetadataCarrier, base: Context = ROOT_CONTEXT): Context {
  return propagation.extract(base, metadata, metadataGetter);
}

/** The W3C `traceparent` of `ctx` (default: active) or "" when there is no sampled-or-not span. */
export function currentTraceparent(ctx: Context = context.active()): string {
  const carrier: Record<string, string> = {};
  propagation.inject(ctx, carrier);
  return carrier["traceparent"] ?? "";
}

/** Where the call goes (client) or where it was served (server). */
export interface RpcEndpoint {
  readonly address: string;
  readonly port?: number;
}

/** A started RPC span and the context to run the call in (the span active in it). */
export interface RpcSpan {
  readonly span: Span;
  readonly context: Context;
  /** Ends the span with a gRPC status code (number); `error` adds `error.type` and the message. */
  end(code: number, error?: { readonly message?: string; readonly name?: string }): void;
}

function tracerOf(tracer?: Tracer): Tracer {
  return tracer ?? trace.getTracer(INSTRUMENTATION_SCOPE);
}

function startRpcSpan(
  kind: SpanKind,
  method: string,
  server: RpcEndpoint | undefined,
  parent: Context,
  tracer: Tracer | undefined,
  client?: RpcEndpoint,
): RpcSpan {
  const attributes: Record<string, string | number> = {
    [ATTR_RPC_SYSTEM_NAME]: "grpc",
    [ATTR_RPC_METHOD]: method,
  };
  if (server !== undefined) {
    attributes[ATTR_SERVER_ADDRESS] = server.address;
    if (server.port !== undefined) attributes[ATTR_SERVER_PORT] = server.port;
  }
  if (client !== undefined) {
    attributes[ATTR_CLIENT_ADDRESS] = client.address;
    if (client.port !== undefined) attributes[ATTR_CLIENT_PORT] = client.port;
  }
  const span = tracerOf(tracer).startSpan(method, { kind, attributes }, parent);
  return new StartedRpcSpan(span, trace.setSpan(parent, span), kind === SpanKind.SERVER);
}

/** A class rather than a closure per call: the server starts one of these for every Branch. */
class StartedRpcSpan implements RpcSpan {
  #ended = false;

  constructor(
    readonly span: Span,
    readonly context: Context,
    readonly server: boolean,
  ) {}

  end(code: number, error?: { readonly message?: string; readonly name?: string }): void {
    if (this.#ended) return;
    this.#ended = true;
    const span = this.span;
    if (span.isRecording()) {
      const name = grpcStatusName(code);
      span.setAttribute(ATTR_RPC_RESPONSE_STATUS_CODE, name);
      if (this.server ? SERVER_ERRORS.has(code) : code !== 0) {
        span.setAttribute(ATTR_ERROR_TYPE, name);
        span.setStatus({ code: SpanStatusCode.ERROR, message: error?.message ?? name });
      }
    }
    span.end();
  }
}

/**
 * Starts the CLIENT span of an outgoing call under `parent` (default: the active context — the
 * branch span when the engine sends a branch through `instrumentTransport`). Inject its context into
 * the call's metadata, then `end(status)` when the call settles.
 *
 * @example
 * const rpc = startClientRpcSpan("tailswarm.v1.Swarm/Branch", { address: "127.0.0.1", port: 7001 });
 * const metadata = new grpc.Metadata();
 * injectTraceContext(metadata, rpc.context);
 * client.makeUnaryRequest(path, ser, des, req, metadata, opts, (err, reply) => {
 *   rpc.end(err?.code ?? 0, err ?? undefined);
 * });
 */
export function startClientRpcSpan(
  method: string,
  server: RpcEndpoint,
  parent: Context = context.active(),
  tracer?: Tracer,
): RpcSpan {
  return startRpcSpan(SpanKind.CLIENT, method, server, parent, tracer);
}

/**
 * Starts the SERVER span of an incoming call as a child of the caller's span found in `metadata`.
 * Run the handler with `context.with(rpc.context, ...)` so fan-outs it starts join the same trace.
 *
 * @example
 * const rpc = startServerRpcSpan("tailswarm.v1.Swarm/Branch", call.metadata, { address: "0.0.0.0", port });
 * try {
 *   const reply = await context.with(rpc.context, () => serve(call.request));
 *   rpc.end(0);
 * } catch (err) { rpc.end(13, err as Error); }
 */
export function startServerRpcSpan(
  method: string,
  metadata: MetadataCarrier,
  server?: RpcEndpoint,
  options: ServerRpcSpanOptions = {},
): RpcSpan {
  const parent = options.parent ?? extractTraceContext(metadata);
  const unsampled = unsampledSpan(parent, options.sampling);
  if (unsampled !== undefined) return new StartedRpcSpan(unsampled.span, unsampled.ctx, true);
  return startRpcSpan(SpanKind.SERVER, method, server, parent, options.tracer, options.client);
}

export interface ServerRpcSpanOptions {
  readonly client?: RpcEndpoint;
  readonly tracer?: Tracer;
  /**
   * The caller's context when the server already extracted it (e.g. with a fallback `traceparent`
   * from the request body); default: extracted from `metadata` with the global propagator.
   */
  readonly parent?: Context;
  /**
   * What the tracer provider's sampler is: where it would not sample the span (an unsampled caller
   * under a parent-based sampler, or a new trace it declines), none is started through the SDK and
   * the handler runs in the caller's context (sampling-hints.ts).
   */
  readonly sampling?: SamplingHints;
}
