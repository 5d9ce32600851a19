import { Metadata } from "@grpc/grpc-js";
import { context, propagation, ROOT_CONTEXT, trace, TraceFlags } from "@opentelemetry/api";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { extractTraceContext, injectTraceContext } from "../../src/mesh/trace.js";
import { SyncContextManager } from "../../src/telemetry/sdk/sync-context-manager.js";

const TRACE = "0af7651916cd43dd8448eb211c80319c";

/** Injects into `metadata` and returns the traceparent it now carries, or "". */
function inject(metadata: Metadata = new Metadata()): string {
  injectTraceContext(metadata);
  const v = metadata.get("traceparent")[0];
  return typeof v === "string" ? v : "";
}

function spanContext(spanId: string, flags: TraceFlags) {
  return trace.setSpanContext(ROOT_CONTEXT, { traceId: TRACE, spanId, traceFlags: flags });
}

describe("trace context in gRPC metadata", () => {
  beforeEach(() => {
    context.setGlobalContextManager(new SyncContextManager().enable());
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  });
  afterEach(() => {
    propagation.disable();
    context.disable();
  });

  it("writes the active context's traceparent, once per context, and the same for every branch in it", () => {
    const fanout = spanContext("b7ad6b7169203331", TraceFlags.NONE);
    const first = new Metadata();
    const second = new Metadata();
    const a = context.with(fanout, () => inject(first));
    const b = context.with(fanout, () => inject(second));
    expect(a).toBe(`00-${TRACE}-b7ad6b7169203331-00`);
    expect(b).toBe(a);
    expect(second.get("traceparent")).toEqual([a]);
    const branch = spanContext("00f067aa0ba902b7", TraceFlags.SAMPLED);
    const c = context.with(branch, () => inject());
    expect(c).toBe(`00-${TRACE}-00f067aa0ba902b7-01`);
    expect(extractTraceContext(second)).not.toBe(ROOT_CONTEXT);
    expect(trace.getSpanContext(extractTraceContext(second))?.spanId).toBe("b7ad6b7169203331");
  });

  it("writes nothing for the root context, and sees a propagator removed later", () => {
    expect(inject()).toBe("");
    const ctx = spanContext("b7ad6b7169203331", TraceFlags.SAMPLED);
    expect(context.with(ctx, () => inject())).not.toBe("");
    propagation.disable();
    const md = new Metadata();
    expect(context.with(spanContext("00f067aa0ba902b7", TraceFlags.SAMPLED), () => inject(md))).toBe("");
    expect(md.get("traceparent")).toEqual([]);
    expect(extractTraceContext(md, `00-${TRACE}-b7ad6b7169203331-01`)).toBe(ROOT_CONTEXT);
  });

  it("reads the metadata's traceparent, else the fallback, and every tracestate header", () => {
    const md = new Metadata();
    const fromBody = `00-${TRACE}-b7ad6b7169203331-01`;
    expect(trace.getSpanContext(extractTraceContext(md, fromBody))).toMatchObject({
      traceId: TRACE,
      spanId: "b7ad6b7169203331",
      traceFlags: TraceFlags.SAMPLED,
      isRemote: true,
    });
    md.set("traceparent", `00-${TRACE}-00f067aa0ba902b7-00`);
    md.add("tracestate", "a=1");
    md.add("tracestate", "b=2");
    const sc = trace.getSpanContext(extractTraceContext(md, fromBody))!;
    expect(sc.spanId).toBe("00f067aa0ba902b7");
    expect(sc.traceState?.serialize()).toBe("a=1,b=2");
    expect(extractTraceContext(new Metadata())).toBe(ROOT_CONTEXT);
  });
});
