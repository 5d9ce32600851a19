/**
 * A real OTLP/gRPC trace receiver for tests: serves `opentelemetry.proto.collector.trace.v1.TraceService`
 * (the subset of the upstream .proto files in ./fixtures, loaded with @grpc/proto-loader) on loopback
 * and keeps every span it receives, flattened with its resource's attributes.
 */
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), "fixtures");

type AttrValue = string | number | boolean | AttrValue[] | undefined;

interface WireAnyValue {
  value?: string;
  stringValue?: string;
  boolValue?: boolean;
  intValue?: string;
  doubleValue?: number;
  arrayValue?: { values: WireAnyValue[] };
  bytesValue?: Buffer;
}
interface WireKeyValue {
  key: string;
  value?: WireAnyValue;
}
interface WireSpan {
  traceId: Buffer;
  spanId: Buffer;
  parentSpanId: Buffer;
  name: string;
  kind: string;
  attributes: WireKeyValue[];
  status?: { code: string; message: string };
}
interface WireRequest {
  resourceSpans: {
    resource?: { attributes: WireKeyValue[] };
    scopeSpans: { scope?: { name: string }; spans: WireSpan[] }[];
  }[];
}

/** One received span; ids as lowercase hex ("" for a root's parent). */
export interface ReceivedSpan {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string;
  readonly name: string;
  /** SPAN_KIND_INTERNAL, SPAN_KIND_SERVER, … */
  readonly kind: string;
  readonly scope: string;
  readonly attributes: Readonly<Record<string, AttrValue>>;
  readonly resource: Readonly<Record<string, AttrValue>>;
  /** STATUS_CODE_UNSET, STATUS_CODE_OK, STATUS_CODE_ERROR */
  readonly status: string;
}

export interface OtlpReceiver {
  /** http://127.0.0.1:<port>, for OTEL_EXPORTER_OTLP_ENDPOINT. */
  readonly endpoint: string;
  readonly spans: ReceivedSpan[];
  /** Export calls received. */
  readonly requests: () => number;
  /** Resolves when `pred(spans)` holds (checked on each export), rejects after `timeoutMs`. */
  waitFor(pred: (spans: readonly ReceivedSpan[]) => boolean, timeoutMs: number): Promise<void>;
  close(): Promise<void>;
}

function anyValue(v: WireAnyValue | undefined): AttrValue {
  if (v === undefined) return undefined;
  switch (v.value) {
    case "stringValue":
      return v.stringValue;
    case "boolValue":
      return v.boolValue;
    case "intValue":
      return Number(v.intValue);
    case "doubleValue":
      return v.doubleValue;
    case "arrayValue":
      return (v.arrayValue?.values ?? []).map(anyValue);
    case "bytesValue":
      return v.bytesValue?.toString("hex");
    default:
      return undefined;
  }
}

function attributes(kvs: readonly WireKeyValue[] | undefined): Record<string, AttrValue> {
  const out: Record<string, AttrValue> = {};
  for (const kv of kvs ?? []) out[kv.key] = anyValue(kv.value);
  return out;
}

/** Starts the receiver on 127.0.0.1 (a free port). */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const def = protoLoader.loadSync("opentelemetry/proto/collector/trace/v1/trace_service.proto", {
    includeDirs: [FIXTURES],
    keepCase: false,
    longs: String,
    enums: String,
    defaults: true,
    oneofs: true,
  });
  const pkg = grpc.loadPackageDefinition(def) as unknown as {
    opentelemetry: {
      proto: { collector: { trace: { v1: { TraceService: { service: grpc.ServiceDefinition } } } } };
    };
  };
  const spans: ReceivedSpan[] = [];
  let requests = 0;
  const waiters = new Set<() => void>();
  const server = new grpc.Server();
  server.addService(pkg.opentelemetry.proto.collector.trace.v1.TraceService.service, {
    Export: (call: grpc.ServerUnaryCall<WireRequest, unknown>, cb: grpc.sendUnaryData<unknown>) => {
      requests++;
      for (const rs of call.request.resourceSpans) {
        const resource = attributes(rs.resource?.attributes);
        for (const ss of rs.scopeSpans) {
          for (const s of ss.spans) {
            spans.push({
              traceId: s.traceId.toString("hex"),
              spanId: s.spanId.toString("hex"),
              parentSpanId: s.parentSpanId.toString("hex"),
              name: s.name,
              kind: s.kind,
              scope: ss.scope?.name ?? "",
              attributes: attributes(s.attributes),
              resource,
              status: s.status?.code ?? "STATUS_CODE_UNSET",
            });
          }
        }
      }
      cb(null, {});
      for (const w of [...waiters]) w();
    },
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (e, p) =>
      e ? reject(e) : resolve(p),
    ),
  );
  return {
    endpoint: `http://127.0.0.1:${port}`,
    spans,
    requests: () => requests,
    waitFor(pred, timeoutMs) {
      if (pred(spans)) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const check = (): void => {
          if (!pred(spans)) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve();
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`OTLP receiver: condition not met in ${timeoutMs} ms (${spans.length} spans)`));
        }, timeoutMs);
        waiters.add(check);
      });
    },
    close: () =>
      new Promise<void>((resolve) => {
        const t = setTimeout(() => {
          server.forceShutdown();
          resolve();
        }, 2_000);
        server.tryShutdown(() => {
          clearTimeout(t);
          resolve();
        });
      }),
  };
}
