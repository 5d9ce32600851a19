/**
 * Server spans for the mesh's gRPC calls, following the current OpenTelemetry RPC semantic conventions
 * (gRPC): span name = fully-qualified method (`tailswarm.v1.Swarm/Branch`), kind SERVER,
 * `rpc.system.name` = "grpc", `rpc.method` = the fully-qualified method, `rpc.response.status_code` =
 * the status code's name ("OK", "DEADLINE_EXCEEDED"), `server.*` and `client.*` when known, and
 * `error.type` when the call failed. The caller's W3C trace context comes from the metadata
 * (src/mesh/trace.ts). The client side has no RPC span: the branch span is what goes out.
 *
 * Records through @opentelemetry/api only; without an SDK every call here is a cheap no-op.
 */
import { SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import type { Context, Span, Tracer } from "@opentelemetry/api";
import { grpcStatusName } from "../mesh/status.js";
import { extractTraceContext } from "../mesh/trace.js";
import type { MetadataReader } from "../mesh/trace.js";
import { ATTR_ERROR_TYPE, INSTRUMENTATION_SCOPE } from "./attributes.js";
import { unsampledSpan } from "./sampling-hints.js";
import type { SamplingHints } from "./sampling-hints.js";

const ATTR_RPC_SYSTEM_NAME = "rpc.system.name";
const ATTR_RPC_METHOD = "rpc.method";
const ATTR_RPC_RESPONSE_STATUS_CODE = "rpc.response.status_code";
const ATTR_SERVER_ADDRESS = "server.address";
const ATTR_SERVER_PORT = "server.port";
const ATTR_CLIENT_ADDRESS = "client.address";
const ATTR_CLIENT_PORT = "client.port";

/** Server-side codes that mark a server span as an error (the gRPC semantic conventions' list). */
const SERVER_ERRORS = new Set([2, 4, 12, 13, 14, 15]);

/** Where the call was served, or where it came from. */
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
  const span = tracerOf(tracer).startSpan(method, { kind: SpanKind.SERVER, attributes }, parent);
  return new StartedRpcSpan(span, trace.setSpan(parent, span));
}

/** A class rather than a closure per call: the server starts one of these for every Branch. */
class StartedRpcSpan implements RpcSpan {
  #ended = false;

  constructor(
    readonly span: Span,
    readonly context: Context,
  ) {}

  end(code: number, error?: { readonly message?: string; readonly name?: string }): void {
    if (this.#ended) return;
    this.#ended = true;
    const span = this.span;
    if (span.isRecording()) {
      const name = grpcStatusName(code);
      span.setAttribute(ATTR_RPC_RESPONSE_STATUS_CODE, name);
      if (SERVER_ERRORS.has(code)) {
        span.setAttribute(ATTR_ERROR_TYPE, name);
        span.setStatus({ code: SpanStatusCode.ERROR, message: error?.message ?? name });
      }
    }
    span.end();
  }
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
  metadata: MetadataReader,
  server?: RpcEndpoint,
  options: ServerRpcSpanOptions = {},
): RpcSpan {
  const parent = options.parent ?? extractTraceContext(metadata);
  const unsampled = unsampledSpan(parent, options.sampling);
  if (unsampled !== undefined) return new StartedRpcSpan(unsampled.span, unsampled.ctx);
  return startRpcSpan(method, server, parent, options.tracer, options.client);
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
