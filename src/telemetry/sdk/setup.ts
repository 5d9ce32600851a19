/**
 * The OpenTelemetry SDK for the node daemon and the CLI (the library records through
 * @opentelemetry/api only). Configured by the standard OTEL_* variables (docs/telemetry.md lists
 * them) plus the node's Prometheus port; without an OTLP endpoint a node exports nothing unless told
 * to, so a node without a collector stays quiet. Registers globally the tracer and meter providers, the
 * W3C propagators and the context manager; `shutdown()` flushes and unregisters them.
 */
import { context, diag, DiagConsoleLogger, metrics, propagation, trace, ValueType } from "@opentelemetry/api";
import type { Attributes, TextMapPropagator } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import {
  CompositePropagator,
  diagLogLevelFromString,
  W3CBaggagePropagator,
  W3CTraceContextPropagator,
} from "@opentelemetry/core";
import {
  defaultResource,
  envDetector,
  detectResources,
  resourceFromAttributes,
} from "@opentelemetry/resources";
import type { Resource } from "@opentelemetry/resources";
import { MeterProvider } from "@opentelemetry/sdk-metrics";
import type { IMetricReader } from "@opentelemetry/sdk-metrics";
import { BatchSpanProcessor, TracerProvider } from "@opentelemetry/sdk-trace";
import type { SpanProcessor } from "@opentelemetry/sdk-trace";
import {
  ATTR_SERVICE_INSTANCE_ID,
  ATTR_SERVICE_NAME,
  ATTR_SERVICE_VERSION,
} from "@opentelemetry/semantic-conventions";
import { TailswarmError } from "../../errors.js";
import { INSTRUMENTATION_SCOPE } from "../attributes.js";
import type { SamplingHints } from "../sampling-hints.js";
import { batchOptions } from "./batch-options.js";
import { metricReaders, spanExporters } from "./exporters.js";
import { packageVersion } from "./package-version.js";
import { samplerFromEnv } from "./sampler-from-env.js";
import { SyncContextManager } from "./sync-context-manager.js";
import type { PrometheusEndpoint } from "./exporters.js";

export interface TelemetrySetupOptions {
  /** `service.name` unless OTEL_SERVICE_NAME / OTEL_RESOURCE_ATTRIBUTES set one. Default "tailswarm". */
  readonly serviceName?: string;
  /** `service.instance.id` (the node id). */
  readonly serviceInstanceId?: string;
  /** `service.version`. Default: tailswarm's version, from its package.json. */
  readonly serviceVersion?: string;
  /** More resource attributes (env wins over these). */
  readonly resourceAttributes?: Attributes;
  /** Serve Prometheus metrics on this port (0: any free port), whatever OTEL_METRICS_EXPORTER says. */
  readonly prometheusPort?: number;
  /** Interface of the Prometheus endpoint. Default: OTEL_EXPORTER_PROMETHEUS_HOST, else all interfaces. */
  readonly prometheusHost?: string;
  /** Extra span processors (tests: a SimpleSpanProcessor over an InMemorySpanExporter). */
  readonly spanProcessors?: readonly SpanProcessor[];
  /** Extra metric readers. */
  readonly metricReaders?: readonly IMetricReader[];
  /**
   * How the active context crosses async boundaries: `async-hooks` (default; the SDK's
   * AsyncLocalStorage manager: the context follows every await, and on Node 24 it runs on
   * AsyncContextFrame, without async hooks; the name is the option's since Node 20) or `sync`
   * (SyncContextManager: only within synchronous `context.with` calls, which tailswarm's own spans and
   * its traces across hops need, and no more).
   */
  readonly contextManager?: "async-hooks" | "sync";
  /**
   * New traces per second the default sampler starts (a child of a sampled caller is always
   * sampled); ignored when OTEL_TRACES_SAMPLER is set. Default DEFAULT_TRACES_PER_SECOND (10).
   */
  readonly tracesPerSecond?: number;
  /** Variables to read instead of process.env (the exporters still read process.env). */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

export interface TelemetrySdk {
  readonly tracerProvider: TracerProvider;
  readonly meterProvider: MeterProvider;
  readonly resource: Resource;
  /** What was installed, for logs: e.g. { traces: ["otlp/grpc"], metrics: ["prometheus"] }. */
  readonly exporters: { readonly traces: readonly string[]; readonly metrics: readonly string[] };
  /** The trace sampler, as its `toString()` gives it (for logs): e.g. "ParentBased{root=RateLimitingSampler{10/s}, …}". */
  readonly sampler: string;
  /**
   * What the sampler is, for `createTelemetry({ sampling })`: the fan-out tracer then starts no span
   * for a fan-out the sampler would not sample. Undefined when OTEL_SDK_DISABLED.
   */
  readonly sampling: SamplingHints | undefined;
  /** The Prometheus endpoint when one is served. */
  readonly prometheus: PrometheusEndpoint | undefined;
  /** Exports what is buffered. */
  forceFlush(): Promise<void>;
  /** Flushes, stops the exporters and the Prometheus server, and unregisters the globals. */
  shutdown(): Promise<void>;
}

/**
 * Installs the SDK. Call once, at process start, before the first fan-out.
 *
 * @example
 * const sdk = await startTelemetry({ serviceName: "tailswarm-node", prometheusPort: 9464 });
 * process.on("SIGTERM", () => void sdk.shutdown());
 */
export async function startTelemetry(options: TelemetrySetupOptions = {}): Promise<TelemetrySdk> {
  const env = options.env ?? process.env;
  const logLevel = env["OTEL_LOG_LEVEL"];
  if (logLevel !== undefined && logLevel !== "") {
    diag.setLogger(new DiagConsoleLogger(), diagLogLevelFromString(logLevel));
  }
  const disabled = (env["OTEL_SDK_DISABLED"] ?? "").trim().toLowerCase() === "true";

  const version = options.serviceVersion ?? packageVersion();
  const base: Attributes = {
    [ATTR_SERVICE_NAME]: options.serviceName ?? "tailswarm",
    ...(version !== undefined && { [ATTR_SERVICE_VERSION]: version }),
    ...options.resourceAttributes,
  };
  if (options.serviceInstanceId !== undefined) base[ATTR_SERVICE_INSTANCE_ID] = options.serviceInstanceId;
  const resource = defaultResource()
    .merge(resourceFromAttributes(base))
    .merge(detectResources({ detectors: [envDetector] }));

  // Everything that can refuse the configuration before anything starts (the Prometheus server does).
  const { sampler, limiter, hints } = disabled
    ? { sampler: undefined, limiter: undefined, hints: undefined }
    : samplerFromEnv(env, options.tracesPerSecond);
  const traces = disabled ? { processors: [], names: [] } : spanExporters(env);
  const batch = disabled ? {} : batchOptions(env);
  const readers = disabled
    ? { readers: [], names: [], prometheus: undefined }
    : await metricReaders(env, { port: options.prometheusPort, host: options.prometheusHost });

  const tracerProvider = new TracerProvider({
    resource,
    sampler,
    spanProcessors: [
      ...traces.processors.map((exporter) => new BatchSpanProcessor({ ...batch, exporter })),
      ...(options.spanProcessors ?? []),
    ],
  });
  const meterProvider = new MeterProvider({
    resource,
    readers: [...readers.readers, ...(options.metricReaders ?? [])],
  });
  if (limiter !== undefined) {
    meterProvider
      .getMeter(INSTRUMENTATION_SCOPE)
      .createObservableCounter(METRIC_TRACE_ROOTS, {
        description: `New traces the default sampler was asked to start (at most ${limiter.rate}/s), by ${ATTR_SAMPLED}`,
        unit: "{trace}",
        valueType: ValueType.INT,
      })
      .addCallback((r) => {
        const { sampled, dropped } = limiter.counts;
        r.observe(sampled, SAMPLED_TRUE);
        r.observe(dropped, SAMPLED_FALSE);
      });
  }

  if (!disabled) {
    context.setGlobalContextManager(
      options.contextManager === "sync"
        ? new SyncContextManager().enable()
        : new AsyncLocalStorageContextManager().enable(),
    );
    const propagator = propagatorFrom(env["OTEL_PROPAGATORS"]);
    if (propagator !== undefined) propagation.setGlobalPropagator(propagator);
    trace.setGlobalTracerProvider(tracerProvider);
    metrics.setGlobalMeterProvider(meterProvider);
  }

  let stopped: Promise<void> | undefined;
  return {
    tracerProvider,
    meterProvider,
    resource,
    exporters: { traces: traces.names, metrics: readers.names },
    prometheus: readers.prometheus,
    sampler: sampler?.toString() ?? "none",
    sampling: hints,
    async forceFlush() {
      await Promise.all([tracerProvider.forceFlush(), meterProvider.forceFlush()]);
    },
    shutdown() {
      stopped ??= (async () => {
        const results = await Promise.allSettled([tracerProvider.shutdown(), meterProvider.shutdown()]);
        if (!disabled) {
          trace.disable();
          metrics.disable();
          propagation.disable();
          context.disable();
        }
        const failed = results.find((r): r is PromiseRejectedResult => r.status === "rejected");
        if (failed !== undefined) {
          throw new TailswarmError("INTERNAL", `telemetry shutdown: ${String(failed.reason)}`, {
            cause: failed.reason,
          });
        }
      })();
      return stopped;
    },
  };
}

/** New traces the default sampler started or not, by `tailswarm.trace.sampled`. */
export const METRIC_TRACE_ROOTS = "tailswarm.trace.roots";
const ATTR_SAMPLED = "tailswarm.trace.sampled";
const SAMPLED_TRUE = Object.freeze({ [ATTR_SAMPLED]: true });
const SAMPLED_FALSE = Object.freeze({ [ATTR_SAMPLED]: false });

function propagatorFrom(value: string | undefined): TextMapPropagator | undefined {
  const names = (value ?? "tracecontext,baggage")
    .split(",")
    .map((s) => s.trim().toLowerCase())
    .filter((s) => s !== "");
  if (names.includes("none")) return undefined;
  const list: TextMapPropagator[] = [];
  for (const n of names) {
    if (n === "tracecontext") list.push(new W3CTraceContextPropagator());
    else if (n === "baggage") list.push(new W3CBaggagePropagator());
    else diag.warn(`OTEL_PROPAGATORS: "${n}" is not supported here (tracecontext, baggage, none)`);
  }
  return new CompositePropagator({ propagators: list });
}
