/**
 * Cost of telemetry on the fan-out path: fan-outs/s over the in-memory engine (Coordinator, 8 peers
 * answering at once, speculate mode, the real LatencyBook) with telemetry off vs on, side by side in
 * one run (interleaved rounds, medians). "On" is the whole node set-up: the SDK's tracer provider with
 * its default sampler (parentbased_always_on: every fan-out and branch span recorded) and a
 * BatchSpanProcessor over a counting exporter, a MeterProvider with a reader, the metrics, the flight
 * recorder and the instrumented transport. Target: <= 5% throughput cost.
 */
import { context } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { ExportResultCode } from "@opentelemetry/core";
import {
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from "@opentelemetry/sdk-metrics";
import { AggregationTemporality } from "@opentelemetry/sdk-metrics";
import { BasicTracerProvider, BatchSpanProcessor } from "@opentelemetry/sdk-trace-base";
import type { ReadableSpan, SpanExporter } from "@opentelemetry/sdk-trace-base";
import { systemClock } from "../src/clock/clock.js";
import { predicateModel } from "../src/decision/predicate-model.js";
import { Coordinator } from "../src/engine/coordinator.js";
import type { PeerTransport } from "../src/engine/transport.js";
import { LatencyBook } from "../src/estimate/latency-book.js";
import { createTelemetry } from "../src/telemetry/telemetry.js";
import { recordFigures } from "./report.js";

const PEERS = Array.from({ length: 8 }, (_, i) => `peer-${i}`);
const ROUNDS = 9;
const PER_ROUND = 400;

const instant: PeerTransport = {
  branch: (peer) => Promise.resolve({ kind: "answer", answer: peer, serviceMs: 0, queueMs: 0 }),
};

const model = predicateModel<string, string>({
  name: "count",
  prior: "none",
  decide: (answers) => String(answers.size),
  canFlip: (_a, outstanding) => outstanding.length > 0,
  parseAnswer: (raw) => String(raw),
});

function coordinator(withTelemetry: boolean): {
  c: Coordinator;
  spans: () => number;
  close: () => Promise<void>;
} {
  const book = new LatencyBook({ windowMs: 10_000, minSamples: 20 }, systemClock);
  for (const p of PEERS) for (let i = 0; i < 50; i++) book.record(p, 1, systemClock.now());
  if (!withTelemetry) {
    return { c: new Coordinator({ transport: instant, book }), spans: () => 0, close: async () => {} };
  }
  let exported = 0;
  const exporter: SpanExporter = {
    export(spans: ReadableSpan[], done) {
      exported += spans.length;
      done({ code: ExportResultCode.SUCCESS });
    },
    shutdown: async () => {},
  };
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(exporter)] });
  const meterProvider = new MeterProvider({
    readers: [
      new PeriodicExportingMetricReader({
        exporter: new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE),
        exportIntervalMillis: 1_000,
      }),
    ],
  });
  const t = createTelemetry({
    tracer: tracerProvider.getTracer("tailswarm"),
    meter: meterProvider.getMeter("tailswarm"),
    estimates: book,
  });
  const c = new Coordinator({ transport: t.wrapTransport(instant), book, observer: t.observer });
  return {
    c,
    spans: () => exported,
    close: async () => {
      t.close();
      await tracerProvider.shutdown();
      await meterProvider.shutdown();
    },
  };
}

/** Runs `n` fan-outs; returns wall and CPU (user + system) µs per fan-out. */
async function round(c: Coordinator, n: number): Promise<{ wall: number; cpu: number }> {
  const task = { kind: "echo", payload: null };
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < n; i++) await c.fanOut(task, { peers: PEERS, budgetMs: 1_000, model });
  const wall = ((performance.now() - t0) * 1000) / n;
  const d = process.cpuUsage(cpu0);
  return { wall, cpu: (d.user + d.system) / n };
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export async function run(): Promise<void> {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  const off = coordinator(false);
  const on = coordinator(true);
  await round(off.c, 300); // warm-up
  await round(on.c, 300);
  const offRuns: { wall: number; cpu: number }[] = [];
  const onRuns: { wall: number; cpu: number }[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    offRuns.push(await round(off.c, PER_ROUND));
    onRuns.push(await round(on.c, PER_ROUND));
  }
  await on.close();
  const offWall = median(offRuns.map((x) => x.wall));
  const onWall = median(onRuns.map((x) => x.wall));
  const offCpu = median(offRuns.map((x) => x.cpu));
  const onCpu = median(onRuns.map((x) => x.cpu));
  recordFigures("telemetry", {
    "fan-outs/s, telemetry off (8 peers, in-memory)": { value: 1e6 / offWall, unit: "1/s" },
    "fan-outs/s, telemetry on (default sampling)": { value: 1e6 / onWall, unit: "1/s" },
    "throughput cost of telemetry (wall)": { value: (1 - offWall / onWall) * 100, unit: "%", target: 5 },
    "CPU per fan-out, telemetry off": { value: offCpu, unit: "µs" },
    "CPU per fan-out, telemetry on": { value: onCpu, unit: "µs" },
    "CPU cost of telemetry": { value: (onCpu / offCpu - 1) * 100, unit: "%", target: 5 },
    "spans exported": { value: on.spans(), unit: "spans", note: "1 fan-out + 8 branch spans per fan-out" },
  });
  context.disable();
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
