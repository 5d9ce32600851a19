import { Metadata } from "@grpc/grpc-js";
import { context, SpanKind, trace } from "@opentelemetry/api";
import { TracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace";
import { describe, expect, it } from "vitest";
import { grpcStatusName } from "../../src/mesh/status.js";
import { traceMetadata } from "../../src/mesh/trace.js";
import { authorityEndpoint, peerEndpoint, startServerRpcSpan } from "../../src/telemetry/rpc-spans.js";
import { useAsyncContextAndW3C } from "./helpers.js";

const exporter = new InMemorySpanExporter();
const tracer = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] }).getTracer("t");

useAsyncContextAndW3C();

describe("RPC spans (OpenTelemetry RPC semantic conventions, gRPC)", () => {
  it("branch span → metadata → server span: one trace, server under the branch, semconv attributes", () => {
    const method = "tailswarm.v1.Swarm/Branch";
    const branch = tracer.startSpan("tailswarm.branch");
    const md = context.with(trace.setSpan(context.active(), branch), () => traceMetadata());
    expect(md.get("traceparent")[0]).toContain(branch.spanContext().spanId);

    const call = { metadata: md, getHost: () => "127.0.0.1:7001", getPeer: () => "127.0.0.1:53210" };
    const server = startServerRpcSpan(method, call, { tracer });
    server.end(0);
    const late = startServerRpcSpan(method, call, { tracer });
    late.end(4, { message: "deadline" });
    branch.end();

    const spans = exporter.getFinishedSpans().filter((x) => x.kind === SpanKind.SERVER);
    const [s, d] = spans;
    expect(s!.name).toBe(method);
    expect(s!.spanContext().traceId).toBe(branch.spanContext().traceId);
    expect(s!.parentSpanContext?.spanId).toBe(branch.spanContext().spanId);
    expect(s!.attributes).toMatchObject({
      "rpc.system.name": "grpc",
      "rpc.method": method,
      "server.address": "127.0.0.1",
      "server.port": 7001,
      "client.address": "127.0.0.1",
      "client.port": 53210,
      "rpc.response.status_code": "OK",
    });
    expect(s!.status.code).toBe(0);
    expect(d!.attributes).toMatchObject({
      "rpc.response.status_code": "DEADLINE_EXCEEDED",
      "error.type": "DEADLINE_EXCEEDED",
    });
    expect(d!.status.code).toBe(2);
  });

  it("server spans count only server-side faults as errors", () => {
    exporter.reset();
    const md = new Metadata();
    startServerRpcSpan("tailswarm.v1.Swarm/Branch", { metadata: md }, { tracer }).end(3); // INVALID_ARGUMENT
    startServerRpcSpan("tailswarm.v1.Swarm/Branch", { metadata: md }, { tracer }).end(13); // INTERNAL
    const [bad, internal] = exporter.getFinishedSpans();
    expect(bad!.status.code).toBe(0);
    expect(bad!.attributes["rpc.response.status_code"]).toBe("INVALID_ARGUMENT");
    expect(internal!.status.code).toBe(2);
    // no caller context in the metadata: a new trace
    expect(bad!.parentSpanContext).toBeUndefined();
    expect(grpcStatusName(99)).toBe("99");
  });

  it("reads server.* from :authority and client.* from grpc-js's peer string", () => {
    expect(authorityEndpoint("node-b:7000")).toEqual({ address: "node-b", port: 7000 });
    expect(authorityEndpoint("node-b")).toEqual({ address: "node-b" });
    expect(authorityEndpoint("[::1]:7000")).toEqual({ address: "::1", port: 7000 });
    expect(authorityEndpoint("[::1]")).toEqual({ address: "::1" });
    expect(authorityEndpoint("node-b:http")).toEqual({ address: "node-b" });
    expect(authorityEndpoint("")).toBeUndefined();
    expect(peerEndpoint("127.0.0.1:53210")).toEqual({ address: "127.0.0.1", port: 53210 });
    expect(peerEndpoint("::ffff:10.0.0.2:4100")).toEqual({ address: "::ffff:10.0.0.2", port: 4100 });
    expect(peerEndpoint("unknown")).toBeUndefined();
    expect(peerEndpoint("/run/node.sock")).toEqual({ address: "/run/node.sock" });
  });
});
