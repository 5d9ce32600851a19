import { Client, credentials, Metadata, Server, ServerCredentials } from "@grpc/grpc-js";
import type { sendUnaryData, ServerUnaryCall } from "@grpc/grpc-js";
import { context, propagation, ROOT_CONTEXT, trace, TraceFlags } from "@opentelemetry/api";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { extractTraceContext, traceMetadata } from "../../src/mesh/trace.js";
import { SyncContextManager } from "../../src/telemetry/sdk/sync-context-manager.js";

const TRACE = "0af7651916cd43dd8448eb211c80319c";

/** The traceparent that the active context's call metadata carries, or "". */
function inject(): string {
  const v = traceMetadata().get("traceparent")[0];
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

  it("writes the active context's traceparent, one Metadata per context shared by every branch in it", () => {
    const fanout = spanContext("b7ad6b7169203331", TraceFlags.NONE);
    const first = context.with(fanout, () => traceMetadata());
    const second = context.with(fanout, () => traceMetadata());
    expect(second).toBe(first);
    expect(first.get("traceparent")).toEqual([`00-${TRACE}-b7ad6b7169203331-00`]);
    const branch = spanContext("00f067aa0ba902b7", TraceFlags.SAMPLED);
    const other = traceMetadata(branch);
    expect(other).not.toBe(first);
    expect(other.get("traceparent")).toEqual([`00-${TRACE}-00f067aa0ba902b7-01`]);
    // the first context's object is unchanged by the second's
    expect(first.get("traceparent")).toEqual([`00-${TRACE}-b7ad6b7169203331-00`]);
    expect(trace.getSpanContext(extractTraceContext(first))?.spanId).toBe("b7ad6b7169203331");
  });

  it("grpc-js sends a shared Metadata's copy: two calls carry it and the object shared is unchanged", async () => {
    const md = traceMetadata(spanContext("b7ad6b7169203331", TraceFlags.NONE));
    const seen: string[] = [];
    const raw = { requestStream: false, responseStream: false };
    const bytes = { serialize: (b: Buffer) => b, deserialize: (b: Buffer) => b };
    const server = new Server();
    server.addService(
      {
        Echo: {
          ...raw,
          path: "/t.T/Echo",
          requestSerialize: bytes.serialize,
          requestDeserialize: bytes.deserialize,
          responseSerialize: bytes.serialize,
          responseDeserialize: bytes.deserialize,
        },
      },
      {
        Echo: (call: ServerUnaryCall<Buffer, Buffer>, cb: sendUnaryData<Buffer>) => {
          seen.push(String(call.metadata.get("traceparent")[0]));
          cb(null, Buffer.alloc(0));
        },
      },
    );
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync("127.0.0.1:0", ServerCredentials.createInsecure(), (e, p) =>
        e ? reject(e) : resolve(p),
      ),
    );
    const client = new Client(`127.0.0.1:${port}`, credentials.createInsecure());
    const call = (): Promise<void> =>
      new Promise((resolve, reject) => {
        client.makeUnaryRequest(
          "/t.T/Echo",
          bytes.serialize,
          bytes.deserialize,
          Buffer.alloc(0),
          md,
          { deadline: Date.now() + 5_000 },
          (error) => (error ? reject(error) : resolve()),
        );
      });
    try {
      await Promise.all([call(), call()]);
    } finally {
      client.close();
      server.forceShutdown();
    }
    expect(seen).toEqual([`00-${TRACE}-b7ad6b7169203331-00`, `00-${TRACE}-b7ad6b7169203331-00`]);
    expect(md.toJSON()).toEqual({ traceparent: [`00-${TRACE}-b7ad6b7169203331-00`] });
  });

  it("writes nothing for the root context, and sees a propagator removed later", () => {
    expect(inject()).toBe("");
    expect(Object.keys(traceMetadata(ROOT_CONTEXT).getMap())).toEqual([]);
    const ctx = spanContext("b7ad6b7169203331", TraceFlags.SAMPLED);
    expect(context.with(ctx, () => inject())).not.toBe("");
    propagation.disable();
    const md = traceMetadata(spanContext("00f067aa0ba902b7", TraceFlags.SAMPLED));
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
