/**
 * Server spans for the mesh's gRPC calls, after OpenTelemetry's RPC semantic conventions (gRPC): named
 * by the fully-qualified method, kind SERVER, with `rpc.*`, `server.*` (from `:authority`) and
 * `client.*` (the remote socket), and `error.type` on a server fault. The parent is the caller's W3C
 * context from the metadata (src/mesh/trace.ts). The client side has no RPC span: the branch span is
 * what goes out. Through @opentelemetry/api only; without an SDK every call here is a cheap no-op.
 */
import { SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import type { Attributes, Context, Span, Tracer } from "@opentelemetry/api";
import { grpcStatusName } from "../mesh/status.js";
import { extractTraceContext } from "../mesh/trace.js";
import type { MetadataReader } from "../mesh/trace.js";
import { INSTRUMENTATION_SCOPE } from "./attributes.js";
import { unsampledSpan } from "./sampling-hints.js";
import type { SamplingHints } from "./sampling-hints.js";
import {
  ATTR_CLIENT_ADDRESS,
  ATTR_CLIENT_PORT,
  ATTR_ERROR_TYPE,
  ATTR_RPC_METHOD,
  ATTR_RPC_RESPONSE_STATUS_CODE,
  ATTR_RPC_SYSTEM_NAME,
  ATTR_SERVER_ADDRESS,
  ATTR_SERVER_PORT,
  RPC_SYSTEM_NAME_VALUE_GRPC,
} from "./semconv.js";

/** Server-side codes that mark a server span as an error (the gRPC semantic conventions' list). */
const SERVER_ERRORS = new Set([2, 4, 12, 13, 14, 15]);

/** Where the call was served, or where it came from. */
export interface RpcEndpoint {
  readonly address: string;
  readonly port?: number;
}

/**
 * What the server knows of an incoming call (grpc-js's server calls have all three). The host and peer
 * are read only when a span is really started.
 */
export interface ServerCallInfo {
  readonly metadata: MetadataReader;
  /** `:authority` as the client sent it (`host`, `host:port`, `[v6]:port`): `server.address`/`.port`. */
  getHost?(): string;
  /** The remote socket as grpc-js gives it (`address:port`, `unknown`): `client.address`/`.port`. */
  getPeer?(): string;
}

function port(text: string): number | undefined {
  if (!/^\d{1,5}$/.test(text)) return undefined;
  const n = Number(text);
  return n > 0 && n <= 65535 ? n : undefined;
}

/** `host[:port]` or `[v6][:port]` (an authority); undefined when empty. */
export function authorityEndpoint(authority: string): RpcEndpoint | undefined {
  if (authority === "") return undefined;
  if (authority.startsWith("[")) {
    const close = authority.indexOf("]");
    if (close < 0) return { address: authority };
    const p = authority[close + 1] === ":" ? port(authority.slice(close + 2)) : undefined;
    return { address: authority.slice(1, close), ...(p !== undefined && { port: p }) };
  }
  const colon = authority.indexOf(":");
  // more than one colon without brackets: a bare IPv6 address, no port
  if (colon < 0 || authority.indexOf(":", colon + 1) >= 0) return { address: authority };
  const p = port(authority.slice(colon + 1));
  return { address: authority.slice(0, colon), ...(p !== undefined && { port: p }) };
}

/** grpc-js's `getPeer()`: `address:port` (IPv6 unbracketed: the port follows the last colon). */
export function peerEndpoint(peer: string): RpcEndpoint | undefined {
  if (peer === "" || peer === "unknown") return undefined;
  if (peer.startsWith("[")) return authorityEndpoint(peer);
  const colon = peer.lastIndexOf(":");
  const p = colon > 0 ? port(peer.slice(colon + 1)) : undefined;
  return p === undefined ? { address: peer } : { address: peer.slice(0, colon), port: p };
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

function setEndpoint(a: Attributes, e: RpcEndpoint | undefined, address: string, portKey: string): void {
  if (e === undefined) return;
  a[address] = e.address;
  if (e.port !== undefined) a[portKey] = e.port;
}

function startRpcSpan(
  method: string,
  call: ServerCallInfo,
  parent: Context,
  tracer: Tracer | undefined,
): RpcSpan {
  const attributes: Attributes = {
    [ATTR_RPC_SYSTEM_NAME]: RPC_SYSTEM_NAME_VALUE_GRPC,
    [ATTR_RPC_METHOD]: method,
  };
  if (call.getHost !== undefined)
    setEndpoint(attributes, authorityEndpoint(call.getHost()), ATTR_SERVER_ADDRESS, ATTR_SERVER_PORT);
  if (call.getPeer !== undefined)
    setEndpoint(attributes, peerEndpoint(call.getPeer()), ATTR_CLIENT_ADDRESS, ATTR_CLIENT_PORT);
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
 * Starts the SERVER span of an incoming call as a child of the caller's span found in its metadata.
 * Run the handler with `context.with(rpc.context, ...)` so fan-outs it starts join the same trace.
 *
 * @example
 * const rpc = startServerRpcSpan("tailswarm.v1.Swarm/Branch", call); // a grpc-js ServerUnaryCall
 * try {
 *   const reply = await context.with(rpc.context, () => serve(call.request));
 *   rpc.end(0);
 * } catch (err) { rpc.end(13, err as Error); }
 */
export function startServerRpcSpan(
  method: string,
  call: ServerCallInfo,
  options: ServerRpcSpanOptions = {},
): RpcSpan {
  const parent = options.parent ?? extractTraceContext(call.metadata);
  const unsampled = unsampledSpan(parent, options.sampling);
  if (unsampled !== undefined) return new StartedRpcSpan(unsampled.span, unsampled.ctx);
  return startRpcSpan(method, call, parent, options.tracer);
}

export interface ServerRpcSpanOptions {
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
