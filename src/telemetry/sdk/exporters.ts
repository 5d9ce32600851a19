/**
 * Exporters chosen from the standard OTEL_* variables: OTLP over gRPC, HTTP/protobuf or HTTP/JSON,
 * console, and (metrics) a Prometheus pull endpoint.
 */
import { createServer } from "node:net";
import type { AddressInfo } from "node:net";
import { diag } from "@opentelemetry/api";
import { OTLPMetricExporter as OtlpMetricGrpc } from "@opentelemetry/exporter-metrics-otlp-grpc";
import { OTLPMetricExporter as OtlpMetricJson } from "@opentelemetry/exporter-metrics-otlp-http";
import { OTLPMetricExporter as OtlpMetricProto } from "@opentelemetry/exporter-metrics-otlp-proto";
import { PrometheusExporter } from "@opentelemetry/exporter-prometheus";
import { OTLPTraceExporter as OtlpTraceGrpc } from "@opentelemetry/exporter-trace-otlp-grpc";
import { OTLPTraceExporter as OtlpTraceJson } from "@opentelemetry/exporter-trace-otlp-http";
import { OTLPTraceExporter as OtlpTraceProto } from "@opentelemetry/exporter-trace-otlp-proto";
import { ConsoleMetricExporter, PeriodicExportingMetricReader } from "@opentelemetry/sdk-metrics";
import type { IMetricReader, PushMetricExporter } from "@opentelemetry/sdk-metrics";
import { ConsoleSpanExporter } from "@opentelemetry/sdk-trace";
import type { SpanExporter } from "@opentelemetry/sdk-trace";
import { invalid } from "../../errors.js";
import { checkRange, describeRange, inRange, intRange, numberAbove } from "../../util/range.js";
import type { NumberRange } from "../../util/range.js";

type Env = Readonly<Record<string, string | undefined>>;

export type OtlpProtocol = "grpc" | "http/protobuf" | "http/json";

/** Where Prometheus scrapes. */
export interface PrometheusEndpoint {
  readonly host: string;
  readonly port: number;
  /** e.g. http://127.0.0.1:9464/metrics */
  readonly url: string;
}

function list(value: string | undefined, fallback: string): string[] {
  const v = value === undefined || value.trim() === "" ? fallback : value;
  return [
    ...new Set(
      v
        .split(",")
        .map((s) => s.trim().toLowerCase())
        .filter((s) => s !== ""),
    ),
  ];
}

function otlpConfigured(env: Env, signal: "TRACES" | "METRICS"): boolean {
  return (
    (env["OTEL_EXPORTER_OTLP_ENDPOINT"] ?? "") !== "" ||
    (env[`OTEL_EXPORTER_OTLP_${signal}_ENDPOINT`] ?? "") !== ""
  );
}

/** The OTLP protocol of a signal: the signal's variable, the general one, or http/protobuf. */
export function otlpProtocol(env: Env, signal: "TRACES" | "METRICS"): OtlpProtocol {
  const raw = (env[`OTEL_EXPORTER_OTLP_${signal}_PROTOCOL`] ?? env["OTEL_EXPORTER_OTLP_PROTOCOL"] ?? "")
    .trim()
    .toLowerCase();
  if (raw === "") return "http/protobuf";
  if (raw === "grpc" || raw === "http/protobuf" || raw === "http/json") return raw;
  throw invalid("OTEL_EXPORTER_OTLP_PROTOCOL", raw, "grpc, http/protobuf or http/json", {
    code: "INVALID_CONFIG",
  });
}

/** Span exporters named by OTEL_TRACES_EXPORTER. */
export function spanExporters(env: Env): { processors: SpanExporter[]; names: string[] } {
  const names = list(env["OTEL_TRACES_EXPORTER"], otlpConfigured(env, "TRACES") ? "otlp" : "none");
  const processors: SpanExporter[] = [];
  const used: string[] = [];
  for (const name of names) {
    if (name === "none") continue;
    if (name === "otlp") {
      const protocol = otlpProtocol(env, "TRACES");
      processors.push(
        protocol === "grpc"
          ? new OtlpTraceGrpc()
          : protocol === "http/json"
            ? new OtlpTraceJson()
            : new OtlpTraceProto(),
      );
      used.push(`otlp/${protocol}`);
    } else if (name === "console") {
      processors.push(new ConsoleSpanExporter());
      used.push("console");
    } else {
      throw invalid("OTEL_TRACES_EXPORTER", name, "a comma list of otlp, console, none", {
        code: "INVALID_CONFIG",
      });
    }
  }
  return { processors, names: used };
}

/** The number in variable `key` (`fallback` when unset), which must be in `range`. */
function envNumber(env: Env, key: string, range: NumberRange, fallback: number): number {
  const raw = env[key];
  if (raw === undefined || raw.trim() === "") return fallback;
  const n = Number(raw);
  if (!inRange(n, range)) {
    throw invalid(key, raw, `${describeRange(range)} (ms)`, { code: "INVALID_CONFIG" });
  }
  return n;
}

/** Metric readers named by OTEL_METRICS_EXPORTER, plus Prometheus when a port is given. */
export async function metricReaders(
  env: Env,
  prometheus: { port?: number; host?: string },
): Promise<{ readers: IMetricReader[]; names: string[]; prometheus: PrometheusEndpoint | undefined }> {
  const names = list(env["OTEL_METRICS_EXPORTER"], otlpConfigured(env, "METRICS") ? "otlp" : "none");
  if (prometheus.port !== undefined && !names.includes("prometheus")) names.push("prometheus");
  const interval = envNumber(env, "OTEL_METRIC_EXPORT_INTERVAL", numberAbove(0), 60_000);
  const timeout = Math.min(envNumber(env, "OTEL_METRIC_EXPORT_TIMEOUT", numberAbove(0), 30_000), interval);
  const periodic = (exporter: PushMetricExporter): IMetricReader =>
    new PeriodicExportingMetricReader({
      exporter,
      exportIntervalMillis: interval,
      exportTimeoutMillis: timeout,
    });
  const readers: IMetricReader[] = [];
  const used: string[] = [];
  let endpoint: PrometheusEndpoint | undefined;
  for (const name of names) {
    if (name === "none") continue;
    if (name === "otlp") {
      const protocol = otlpProtocol(env, "METRICS");
      readers.push(
        periodic(
          protocol === "grpc"
            ? new OtlpMetricGrpc()
            : protocol === "http/json"
              ? new OtlpMetricJson()
              : new OtlpMetricProto(),
        ),
      );
      used.push(`otlp/${protocol}`);
    } else if (name === "console") {
      readers.push(periodic(new ConsoleMetricExporter()));
      used.push("console");
    } else if (name === "prometheus") {
      const started = await startPrometheus(env, prometheus);
      readers.push(started.reader);
      endpoint = started.endpoint;
      used.push("prometheus");
    } else {
      throw invalid("OTEL_METRICS_EXPORTER", name, "a comma list of otlp, prometheus, console, none", {
        code: "INVALID_CONFIG",
      });
    }
  }
  return { readers, names: used, prometheus: endpoint };
}

async function startPrometheus(
  env: Env,
  opts: { port?: number; host?: string },
): Promise<{ reader: PrometheusExporter; endpoint: PrometheusEndpoint }> {
  const port = opts.port ?? Number(env["OTEL_EXPORTER_PROMETHEUS_PORT"] ?? 9464);
  checkRange(
    opts.port !== undefined ? "metrics.prometheusPort" : "OTEL_EXPORTER_PROMETHEUS_PORT",
    port,
    intRange(0, 65_535),
  );
  const host = opts.host ?? (env["OTEL_EXPORTER_PROMETHEUS_HOST"] || undefined);
  // The exporter reads port 0 as "default" (9464): pick a free port for it.
  const listenPort = port === 0 ? await freePort(host) : port;
  let reader!: PrometheusExporter;
  await new Promise<void>((resolve, reject) => {
    reader = new PrometheusExporter({ port: listenPort, host }, (err) => (err ? reject(err) : resolve()));
  }).catch((err: unknown) => {
    throw invalid(
      "metrics.prometheusPort",
      port,
      `a port this host can listen on (${(err as Error).message ?? String(err)})`,
      { code: "INVALID_CONFIG", cause: err },
    );
  });
  const bound = listenPort;
  const shown = host === undefined || host === "0.0.0.0" || host === "::" ? "127.0.0.1" : host;
  diag.debug(`tailswarm: Prometheus metrics on http://${shown}:${bound}/metrics`);
  return { reader, endpoint: { host: shown, port: bound, url: `http://${shown}:${bound}/metrics` } };
}

function freePort(host: string | undefined): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, host, () => {
      const port = (srv.address() as AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}
