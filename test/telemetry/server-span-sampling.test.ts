/**
 * Server RPC spans with sampling hints: where the sampler would not sample (an unsampled caller under a
 * parent-based sampler, a new trace it declines) the SDK is not asked, and the handler runs in the
 * caller's context; elsewhere the SDK decides as before. Then the same through a real swarm server.
 */
import { Metadata } from "@grpc/grpc-js";
import { context, propagation, ROOT_CONTEXT, trace, TraceFlags } from "@opentelemetry/api";
import type { Context } from "@opentelemetry/api";
import { AlwaysOnSampler } from "@opentelemetry/sdk-trace";
import { afterAll, describe, expect, it } from "vitest";
import { GrpcTransport } from "../../src/mesh/grpc-transport.js";
import { HandlerRegistry } from "../../src/mesh/handler.js";
import type { SamplingHints } from "../../src/telemetry/sampling-hints.js";
import { startServerRpcSpan } from "../../src/telemetry/rpc-spans.js";
import { startServer } from "../mesh/helpers.js";
import { countingSdk, useAsyncContextAndW3C } from "./helpers.js";

useAsyncContextAndW3C();

const METHOD = "tailswarm.v1.Swarm/Branch";
const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const SPAN_ID = "00f067aa0ba902b7";

/** An always-on SDK (it would sample anything it is asked about) whose startSpan calls are counted. */
const sdk = () => countingSdk(new AlwaysOnSampler());

/** The caller's context as a server extracts it: a remote span context, sampled or not. */
const remoteParent = (traceFlags: TraceFlags): Context =>
  trace.setSpanContext(ROOT_CONTEXT, { traceId: TRACE_ID, spanId: SPAN_ID, traceFlags, isRemote: true });

function metadataWith(traceparent?: string): Metadata {
  const md = new Metadata();
  if (traceparent !== undefined) md.set("traceparent", traceparent);
  return md;
}

const unsampledCaller = `00-${TRACE_ID}-${SPAN_ID}-00`;
const sampledCaller = `00-${TRACE_ID}-${SPAN_ID}-01`;

describe("server RPC spans with sampling hints", () => {
  it("an unsampled caller under a parent-based sampler: no SDK span, the caller's context", () => {
    const s = sdk();
    const rpc = startServerRpcSpan(
      METHOD,
      { metadata: metadataWith(unsampledCaller) },
      {
        tracer: s.tracer,
        sampling: { parentBased: true },
      },
    );
    expect(s.started()).toBe(0);
    expect(rpc.span.isRecording()).toBe(false);
    const sc = trace.getSpanContext(rpc.context)!;
    expect(sc).toMatchObject({ traceId: TRACE_ID, spanId: SPAN_ID, traceFlags: TraceFlags.NONE });
    const carrier: Record<string, string> = {};
    propagation.inject(rpc.context, carrier);
    expect(carrier["traceparent"]).toBe(unsampledCaller); // what the handler's own fan-outs carry on
    rpc.end(0);
    rpc.end(13, { message: "twice" }); // ending twice is harmless
    expect(s.exporter.getFinishedSpans()).toHaveLength(0);
  });

  it("a sampled caller, or a sampler not parent-based: the SDK decides, as without hints", () => {
    const s = sdk();
    startServerRpcSpan(
      METHOD,
      { metadata: metadataWith(sampledCaller) },
      {
        tracer: s.tracer,
        sampling: { parentBased: true },
      },
    ).end(0);
    startServerRpcSpan(
      METHOD,
      { metadata: metadataWith(unsampledCaller) },
      {
        tracer: s.tracer,
        sampling: { parentBased: false },
      },
    ).end(0);
    expect(s.started()).toBe(2);
    const spans = s.exporter.getFinishedSpans();
    expect(spans.map((x) => x.parentSpanContext?.spanId)).toEqual([SPAN_ID, SPAN_ID]);
    expect(spans[0]!.attributes).toMatchObject({ "rpc.method": METHOD, "rpc.response.status_code": "OK" });
  });

  it("no caller context: a declined root starts no SDK span but a fresh unsampled trace; else the SDK decides", () => {
    const s = sdk();
    let declines = true;
    const hints: SamplingHints = { parentBased: true, declinesRoot: () => declines };
    const a = startServerRpcSpan(METHOD, { metadata: metadataWith() }, { tracer: s.tracer, sampling: hints });
    const b = startServerRpcSpan(METHOD, { metadata: metadataWith() }, { tracer: s.tracer, sampling: hints });
    expect(s.started()).toBe(0);
    const sa = trace.getSpanContext(a.context)!;
    const sb = trace.getSpanContext(b.context)!;
    expect(sa.traceFlags).toBe(TraceFlags.NONE);
    expect(sa.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(sa.traceId).not.toBe(sb.traceId);
    declines = false;
    startServerRpcSpan(METHOD, { metadata: metadataWith() }, { tracer: s.tracer, sampling: hints }).end(0);
    expect(s.started()).toBe(1);
    expect(s.exporter.getFinishedSpans()).toHaveLength(1);
  });
});

describe("a swarm server given sampling hints (real gRPC on loopback)", () => {
  const s = sdk();
  trace.setGlobalTracerProvider({ getTracer: () => s.tracer }); // the server asks the global one
  const seen: (Context | undefined)[] = [];
  const started = startServer({
    sampling: { parentBased: true },
    handlers: new HandlerRegistry([
      {
        kind: "see",
        async handle(_task, ctx) {
          seen.push(ctx.traceContext);
          return null;
        },
      },
    ]),
  });
  const transport = new GrpcTransport();
  afterAll(async () => {
    transport.close();
    (await started).server.forceClose();
    trace.disable();
  });

  async function branchUnder(parent: Context): Promise<void> {
    const { address } = await started;
    const now = performance.timeOrigin + performance.now();
    const r = await context.with(parent, () =>
      transport.branch(
        address,
        {
          fanoutId: "f",
          branchId: `f-${seen.length}`,
          task: { kind: "see", payload: null },
          origin: "t",
          hop: 0,
          deadline: now + 5_000,
        },
        { signal: new AbortController().signal },
      ),
    );
    expect(r.kind).toBe("answer");
  }

  it("serves an unsampled caller's Branch in the caller's context, without an SDK span; a sampled one with a recorded server span", async () => {
    await branchUnder(remoteParent(TraceFlags.NONE));
    expect(s.started()).toBe(0);
    expect(trace.getSpanContext(seen[0]!)).toMatchObject({ traceId: TRACE_ID, spanId: SPAN_ID });

    await branchUnder(remoteParent(TraceFlags.SAMPLED));
    expect(s.started()).toBe(1);
    const server = s.exporter.getFinishedSpans().find((x) => x.name === METHOD)!;
    expect(server.parentSpanContext?.spanId).toBe(SPAN_ID);
    expect(trace.getSpanContext(seen[1]!)?.spanId).toBe(server.spanContext().spanId);
  });
});
