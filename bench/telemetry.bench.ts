/**
 * Cost of telemetry on the fan-out path, without the network: fan-outs/s over the in-memory engine
 * (Coordinator, 8 peers answering at once, speculate mode, the real LatencyBook) with telemetry off,
 * at default sampling, and with every fan-out traced, side by side in one run (interleaved rounds,
 * medians). "Default" is the node's set-up: the SDK's tracer provider with the node's default sampler
 * (parent-based, at most 10 new traces/s: in this loop of thousands of fan-outs/s nearly all of them go
 * unsampled, so it prices the unsampled path), the AsyncLocalStorage context manager, a BatchSpanProcessor over the
 * OTLP/gRPC exporter (to a sink process that drops the bytes: the protobuf serialization and the export
 * calls are paid here, as a node pays them), a MeterProvider with a reader, the metrics, the flight
 * recorder and the instrumented transport. "Every fan-out traced" is the same with
 * parentbased_always_on. Target: <= 5%.
 *
 * A second part prices a peer's `Branch` server span alone: extract the caller's context from the
 * metadata, start the span, run in its context, set the reply's attributes, end and export it — with a
 * sampled caller (recorded), an unsampled one (a non-recording span) and no caller context at all.
 * A third prices each part of a coordinator's per-fan-out telemetry driven alone: the fan-out tracer's,
 * the metrics' and the flight recorder's hooks.
 *
 * Both are in-process loops, so they are far less sensitive to the shared machine's load than the gRPC
 * bench (bench/telemetry-grpc.bench.ts), and they price exactly the work telemetry adds; the gRPC bench
 * prices what that work comes to in a real swarm.
 */
import { spawn } from "node:child_process";
import { fileURLToPath, pathToFileURL } from "node:url";
import { Metadata } from "@grpc/grpc-js";
import { context, propagation } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { CompositePropagator, W3CBaggagePropagator, W3CTraceContextPropagator } from "@opentelemetry/core";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-grpc";
import {
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from "@opentelemetry/sdk-metrics";
import { AggregationTemporality } from "@opentelemetry/sdk-metrics";
import {
  AlwaysOnSampler,
  TracerProvider,
  BatchSpanProcessor,
  ParentBasedSampler,
} from "@opentelemetry/sdk-trace";
import type { ReadableSpan, SpanExporter } from "@opentelemetry/sdk-trace";
import { systemClock } from "../src/clock/clock.js";
import { predicateModel } from "../src/decision/predicate-model.js";
import { Coordinator } from "../src/engine/coordinator.js";
import type { PeerTransport } from "../src/engine/transport.js";
import { LatencyBook } from "../src/estimate/latency-book.js";
import { extractTraceContext, traceMetadata } from "../src/mesh/trace.js";
import { ATTR } from "../src/telemetry/attributes.js";
import { startServerRpcSpan } from "../src/telemetry/rpc-spans.js";
import { samplerFromEnv } from "../src/telemetry/sdk/sampler-from-env.js";
import type { SamplingHints } from "../src/telemetry/sampling-hints.js";
import { createTelemetry } from "../src/telemetry/telemetry.js";
import { FanoutTracer } from "../src/telemetry/fanout-tracer.js";
import { FanoutMetrics } from "../src/telemetry/metrics.js";
import { FlightRecorder } from "../src/telemetry/flight-recorder.js";
import type { BranchRecord, FanoutOutcome } from "../src/engine/outcome.js";
import type { BranchRequest } from "../src/engine/transport.js";
import type { FanoutEstimate } from "../src/estimate/types.js";
import type { Classification } from "../src/policy/types.js";
import { recordFigures } from "./report.js";
import type { Figure } from "./report.js";

const PEERS = Array.from({ length: 8 }, (_, i) => `peer-${i}`);

/** The hook rows' fan-out: speculative, decided on a fresh estimate of 8 peers, every branch answered. */
const SPECULATED = {
  mode: "speculate",
  reason: "budget-exceeds-p99-plus-abandon-cost",
  relevant: true,
  budgetMs: 500,
  fanoutP50Ms: 10,
  fanoutP99Ms: 50,
  abandonCostMs: 3,
  policy: "p99-boundary",
} as unknown as Classification;
const ESTIMATE = {
  size: 8,
  requirement: { kind: "all" },
  status: "fresh",
  minSamples: 20,
  basis: "independent",
  observedSamples: 0,
  maxAgeMs: 100,
  unknownPeers: [],
} as unknown as FanoutEstimate;
/** Its branches, one per peer, the first decision-relevant. */
const ANSWERED = PEERS.map(
  (peer, b) =>
    ({
      branchId: `b${b}`,
      peer,
      outcome: "committed",
      latencyMs: 1 + b,
      decisionRelevant: b === 0,
      lostWorkMs: 0,
      result: { kind: "answer" },
    }) as unknown as BranchRecord,
);
const ROUNDS = 15;
const PER_ROUND = 400;
const SPANS_PER_ROUND = 4_000;
/** Attribute counts of the SDK floor part (see plainSpans). */
const ATTRIBUTE_COUNTS = [0, 5, 13, 25] as const;

/** Answers at once; like GrpcTransport, it first writes the branch's trace context into call metadata. */
const instant: PeerTransport = {
  branch: (peer, _req, opts) => {
    traceMetadata(opts.traceContext);
    return Promise.resolve({ kind: "answer", answer: peer, serviceMs: 0, queueMs: 0 });
  },
};

const model = predicateModel<string, string>({
  name: "count",
  prior: "none",
  decide: (answers) => String(answers.size),
  canFlip: (_a, outstanding) => outstanding.length > 0,
  parseAnswer: (raw) => String(raw),
});

/** An OTLP/gRPC sink (bench/telemetry-peer.ts sink): accepts exports, drops the bytes. */
async function startSink(): Promise<{ url: string; stop(): void }> {
  const script = fileURLToPath(new URL("./telemetry-peer.ts", import.meta.url));
  const child = spawn(process.execPath, ["--import", "tsx", script, "sink"], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  const port = await new Promise<number>((resolve, reject) => {
    let out = "";
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
      const m = /PORT (\d+)\n/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    child.on("exit", (code) => reject(new Error(`sink exited with ${code}`)));
  });
  return { url: `http://127.0.0.1:${port}`, stop: () => child.stdin.end() };
}

/** The OTLP/gRPC exporter, counting what it was given. */
function countingOtlp(url: string): { exporter: SpanExporter; exported: () => number } {
  const otlp = new OTLPTraceExporter({ url });
  let exported = 0;
  return {
    exporter: {
      export(spans: ReadableSpan[], done) {
        exported += spans.length;
        otlp.export(spans, done);
      },
      shutdown: () => otlp.shutdown(),
      forceFlush: () => otlp.forceFlush(),
    },
    exported: () => exported,
  };
}

function coordinator(
  mode: "off" | "default" | "always",
  url: string,
): {
  c: Coordinator;
  spans: () => number;
  flush: () => Promise<void>;
  close: () => Promise<void>;
} {
  const book = new LatencyBook({ windowMs: 10_000, minSamples: 20 }, systemClock);
  for (const p of PEERS) for (let i = 0; i < 50; i++) book.record(p, 1, systemClock.now());
  if (mode === "off") {
    return {
      c: new Coordinator({ transport: instant, book }),
      spans: () => 0,
      flush: async () => {},
      close: async () => {},
    };
  }
  const { exporter, exported } = countingOtlp(url);
  const env = samplerFromEnv({});
  const tracerProvider = new TracerProvider({
    sampler: mode === "always" ? new ParentBasedSampler({ root: new AlwaysOnSampler() }) : env.sampler,
    spanProcessors: [new BatchSpanProcessor({ exporter })],
  });
  const meterProvider = new MeterProvider({
    readers: [
      new PeriodicExportingMetricReader({
        exporter: new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE),
        exportIntervalMillis: 60_000,
      }),
    ],
  });
  const t = createTelemetry({
    tracer: tracerProvider.getTracer("tailswarm"),
    meter: meterProvider.getMeter("tailswarm"),
    estimates: book,
    sampling: mode === "always" ? { parentBased: true } : env.hints, // as the node passes them
  });
  const c = new Coordinator({ transport: t.wrapTransport(instant), book, observer: t.observer });
  return {
    c,
    spans: exported,
    flush: () => tracerProvider.forceFlush(),
    close: async () => {
      t.close();
      await tracerProvider.shutdown();
      await meterProvider.shutdown();
    },
  };
}

/** Runs `n` fan-outs and exports their spans; returns wall and CPU (user + system) µs per fan-out. */
async function round(
  x: { c: Coordinator; flush: () => Promise<void> },
  n: number,
): Promise<{ wall: number; cpu: number }> {
  const task = { kind: "echo", payload: null };
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < n; i++) {
    await x.c.fanOut(task, { peers: PEERS, budgetMs: 60_000, model });
    // The in-memory fan-outs settle in microtasks: without a turn of the event loop now and then the
    // exporter's calls would never go out, and the batch processor's queue (2048 spans) would drop.
    if (i % 16 === 15) await new Promise((r) => setImmediate(r));
  }
  await x.flush();
  const wall = ((performance.now() - t0) * 1000) / n;
  const d = process.cpuUsage(cpu0);
  return { wall, cpu: (d.user + d.system) / n };
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/**
 * A peer's Branch server span, `n` times, under a caller whose traceparent is sampled (`flags` 01) or
 * not (00), or with none; with `sampling`, the hints a node's server gets (`sdk.sampling`); returns
 * CPU µs per call, export included.
 */
async function serverSpans(
  provider: TracerProvider,
  flags: "00" | "01" | "none",
  n: number,
  sampling?: SamplingHints,
): Promise<number> {
  const tracer = provider.getTracer("tailswarm");
  const traceparent = `00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-${flags}`;
  const cpu0 = process.cpuUsage();
  for (let i = 0; i < n; i++) {
    const md = new Metadata();
    if (flags !== "none") md.set("traceparent", traceparent);
    const rpc = startServerRpcSpan(
      "tailswarm.v1.Swarm/Branch",
      { metadata: md },
      {
        parent: extractTraceContext(md),
        tracer,
        sampling,
      },
    );
    await context.with(rpc.context, () => Promise.resolve());
    if (rpc.span.isRecording()) {
      rpc.span.setAttributes({
        [ATTR.fanoutId]: "V1StGXR8_Z5jdHi6B-myT",
        [ATTR.branchId]: `V1StGXR8_Z5jdHi6B-myT.${i & 7}`,
        [ATTR.taskKind]: "echo",
        [ATTR.hop]: 0,
        [ATTR.branchStatus]: "answered",
        [ATTR.branchQueueMs]: 0.02,
        [ATTR.branchServiceMs]: 0.05,
        [ATTR.branchLostWorkMs]: 0,
      });
    }
    rpc.end(0);
    if (i % 128 === 127) await new Promise((r) => setImmediate(r));
  }
  await provider.forceFlush();
  const d = process.cpuUsage(cpu0);
  return (d.user + d.system) / n;
}

/**
 * The fan-out tracer's own hooks for `n` unsampled fan-outs of 8 branches each (decision, 8 branches
 * started and reported, end), driven directly; returns CPU µs per fan-out. With the node's sampling
 * hints the tracer starts no SDK span for a fan-out the sampler declines; without them it asks the SDK.
 */
function tracerHooks(ft: FanoutTracer, n: number): number {
  const cpu0 = process.cpuUsage();
  for (let i = 0; i < n; i++) {
    const id = `f${i}`;
    ft.onDecision(id, SPECULATED, ESTIMATE);
    for (let b = 0; b < PEERS.length; b++) {
      ft.startBranch(PEERS[b]!, {
        fanoutId: id,
        branchId: `${id}.${b}`,
        task: { kind: "echo", payload: null },
      } as BranchRequest);
    }
    for (let b = 0; b < PEERS.length; b++) {
      ft.onBranchEnd(id, {
        branchId: `${id}.${b}`,
        peer: PEERS[b]!,
        outcome: "committed",
        latencyMs: 1,
        decisionRelevant: true,
        lostWorkMs: 0,
        result: { kind: "answer" },
      } as unknown as BranchRecord);
    }
    ft.onFanoutEnd({
      fanoutId: id,
      classification: SPECULATED,
      branches: [],
      elapsedMs: 5,
    } as unknown as FanoutOutcome);
  }
  const d = process.cpuUsage(cpu0);
  return (d.user + d.system) / n;
}

/**
 * The metrics' hooks per fan-out of 8 answered branches (`onBranchEnd` × 8 and `onFanoutEnd`: the
 * counts, the queued histograms and the branch durations), collected once per 64 fan-outs as a reader
 * would; returns CPU µs per fan-out.
 */
async function metricsHooks(n: number): Promise<number> {
  const reader = new PeriodicExportingMetricReader({
    exporter: new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE),
    exportIntervalMillis: 3_600_000,
  });
  const provider = new MeterProvider({ readers: [reader] });
  const m = new FanoutMetrics({ meter: provider.getMeter("tailswarm") });
  const outcome = {
    fanoutId: "f",
    classification: SPECULATED,
    policy: "p99-boundary",
    branches: ANSWERED,
    answered: ANSWERED.length,
    degraded: false,
    decisionChanged: true,
    deadlineMissed: false,
    elapsedMs: 9,
    infoGainPerCommitted: 0.5,
  } as unknown as FanoutOutcome;
  const cpu0 = process.cpuUsage();
  for (let i = 0; i < n; i++) {
    for (const r of ANSWERED) m.onBranchEnd("f", r);
    m.onFanoutEnd(outcome);
    if (i % 64 === 63) await reader.forceFlush();
  }
  const d = process.cpuUsage(cpu0);
  m.close();
  await provider.shutdown();
  return (d.user + d.system) / n;
}

/**
 * The flight recorder's hooks per fan-out of 8 answered branches (`onBranchEnd` × 8 and `onFanoutEnd`:
 * one decision kept in the ring), as a node runs it (256 decisions); returns CPU µs per fan-out.
 */
function recorderHooks(n: number): number {
  const r = new FlightRecorder({ capacity: 256 });
  const cpu0 = process.cpuUsage();
  for (let i = 0; i < n; i++) {
    const id = `f${i}`;
    for (const b of ANSWERED) r.onBranchEnd(id, b);
    r.onFanoutEnd({
      fanoutId: id,
      classification: SPECULATED,
      estimate: ESTIMATE,
      branches: ANSWERED,
      answered: ANSWERED.length,
      abandonCostMs: 0,
      decisionChanged: true,
      degraded: false,
      deadlineMissed: false,
      elapsedMs: 9,
      infoGainPerCommitted: 0.5,
    } as unknown as FanoutOutcome);
  }
  const d = process.cpuUsage(cpu0);
  return (d.user + d.system) / n;
}

/**
 * The SDK's own floor per span, by attribute count: `n` spans started with `attributes` string and
 * number attributes and ended, batched and exported over OTLP/gRPC to the sink; returns CPU µs per span.
 * Our fan-out span carries about 25 attributes, a branch span 8, a peer's server span 12–14.
 */
async function plainSpans(provider: TracerProvider, attributes: number, n: number): Promise<number> {
  const tracer = provider.getTracer("tailswarm");
  const attrs: Record<string, string | number> = {};
  for (let i = 0; i < attributes; i++)
    attrs[`tailswarm.bench.a${i}`] = i % 2 === 0 ? `v${i}-V1StGXR8_Z5jdHi6B` : i * 1.5;
  const cpu0 = process.cpuUsage();
  for (let i = 0; i < n; i++) {
    tracer.startSpan("tailswarm.bench", { attributes: attrs }).end();
    if (i % 128 === 127) await new Promise((r) => setImmediate(r));
  }
  await provider.forceFlush();
  const d = process.cpuUsage(cpu0);
  return (d.user + d.system) / n;
}

export async function run(): Promise<void> {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(
    new CompositePropagator({ propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()] }),
  );
  const sink = await startSink();
  try {
    const off = coordinator("off", sink.url);
    const def = coordinator("default", sink.url);
    const on = coordinator("always", sink.url);
    await round(off, 300); // warm-up
    await round(def, 300);
    await round(on, 300);
    const offRuns: { wall: number; cpu: number }[] = [];
    const defRuns: { wall: number; cpu: number }[] = [];
    const onRuns: { wall: number; cpu: number }[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      offRuns.push(await round(off, PER_ROUND));
      defRuns.push(await round(def, PER_ROUND));
      onRuns.push(await round(on, PER_ROUND));
    }
    const fanouts = 300 + ROUNDS * PER_ROUND; // the "always" coordinator's warm-up and rounds
    const spans = on.spans();
    const defSpans = def.spans();
    await on.close();
    await def.close();

    const { exporter } = countingOtlp(sink.url);
    const provider = new TracerProvider({ spanProcessors: [new BatchSpanProcessor({ exporter })] });
    await serverSpans(provider, "01", SPANS_PER_ROUND); // warm-up
    await serverSpans(provider, "00", SPANS_PER_ROUND);
    // "No caller context" under the node's default sampler (a root: rate-limited, so it records only
    // the first few), as a peer serves a Branch from a caller that sends no traceparent.
    const nodeSampler = samplerFromEnv({});
    const nodeProvider = new TracerProvider({
      sampler: nodeSampler.sampler,
      spanProcessors: [new BatchSpanProcessor({ exporter: countingOtlp(sink.url).exporter })],
    });
    await serverSpans(nodeProvider, "none", SPANS_PER_ROUND); // warm-up, and the bucket emptied
    const recorded: number[] = [];
    const unsampled: number[] = [];
    const noContext: number[] = [];
    const unsampledHinted: number[] = [];
    const noContextHinted: number[] = [];
    const hints = nodeSampler.hints;
    await serverSpans(nodeProvider, "00", SPANS_PER_ROUND, hints); // warm-up
    for (let r = 0; r < ROUNDS; r++) {
      noContext.push(await serverSpans(nodeProvider, "none", SPANS_PER_ROUND));
      unsampled.push(await serverSpans(provider, "00", SPANS_PER_ROUND));
      recorded.push(await serverSpans(provider, "01", SPANS_PER_ROUND));
      unsampledHinted.push(await serverSpans(nodeProvider, "00", SPANS_PER_ROUND, hints));
      noContextHinted.push(await serverSpans(nodeProvider, "none", SPANS_PER_ROUND, hints));
    }
    const byAttributes = new Map<number, number[]>();
    for (const a of ATTRIBUTE_COUNTS) await plainSpans(provider, a, SPANS_PER_ROUND); // warm-up
    for (let r = 0; r < ROUNDS; r++) {
      for (const a of ATTRIBUTE_COUNTS) {
        const runs = byAttributes.get(a) ?? [];
        runs.push(await plainSpans(provider, a, SPANS_PER_ROUND));
        byAttributes.set(a, runs);
      }
    }
    await provider.shutdown();
    await nodeProvider.shutdown();

    // The fan-out tracer's hooks alone, unsampled (a sampler that never starts a trace), with and
    // without the sampling hints the node passes.
    const never = samplerFromEnv({}, 0);
    const hooksTracer = new TracerProvider({ sampler: never.sampler }).getTracer("tailswarm");
    const asked = new FanoutTracer({ tracer: hooksTracer });
    const hinted = new FanoutTracer({ tracer: hooksTracer, sampling: never.hints });
    tracerHooks(asked, 20 * PER_ROUND); // warm-up
    tracerHooks(hinted, 20 * PER_ROUND);
    const askedRuns: number[] = [];
    const hintedRuns: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      askedRuns.push(tracerHooks(asked, 20 * PER_ROUND));
      hintedRuns.push(tracerHooks(hinted, 20 * PER_ROUND));
    }
    await metricsHooks(20 * PER_ROUND); // warm-up
    const metricsRuns: number[] = [];
    for (let r = 0; r < ROUNDS; r++) metricsRuns.push(await metricsHooks(20 * PER_ROUND));
    recorderHooks(20 * PER_ROUND); // warm-up
    const recorderRuns: number[] = [];
    for (let r = 0; r < ROUNDS; r++) recorderRuns.push(recorderHooks(20 * PER_ROUND));
    const floor: Record<string, Figure> = {};
    for (const [a, runs] of byAttributes) {
      floor[`a span with ${a} attributes, recorded and exported: CPU per span`] = {
        value: median(runs),
        unit: "µs",
        note: "the SDK's floor: start, end, batch, OTLP protobuf and gRPC export, no context or propagation",
      };
    }

    const offWall = median(offRuns.map((x) => x.wall));
    const onWall = median(onRuns.map((x) => x.wall));
    const offCpu = median(offRuns.map((x) => x.cpu));
    const onCpu = median(onRuns.map((x) => x.cpu));
    const defWall = median(defRuns.map((x) => x.wall));
    const defCpu = median(defRuns.map((x) => x.cpu));
    // Rounds alternate off, default, every-fan-out: each round's difference against the off round of
    // its own cycle, so the machine's drift between cycles cancels.
    const pairedDef = defRuns.map((x, r) => x.cpu - offRuns[r]!.cpu);
    const pairedDefSorted = [...pairedDef].sort((a, b) => a - b);
    recordFigures("telemetry", {
      "fan-outs/s, telemetry off (8 peers, in-memory)": { value: 1e6 / offWall, unit: "1/s" },
      "fan-outs/s, telemetry on (default sampling: ≤ 10 new traces/s)": { value: 1e6 / defWall, unit: "1/s" },
      "CPU per fan-out, telemetry off": { value: offCpu, unit: "µs" },
      "CPU per fan-out, telemetry on (default sampling)": { value: defCpu, unit: "µs" },
      "telemetry CPU per fan-out at default sampling (the unsampled path: a non-recording fan-out span, metrics, recorder, 8 traceparent injects)":
        {
          value: defCpu - offCpu,
          unit: "µs",
          note: `${defSpans} spans exported in this loop; what a fan-out pays on top of its own work when it is not traced`,
        },
      "telemetry CPU per fan-out at default sampling, paired (median over rounds of the round's CPU minus its cycle's off round)":
        {
          value: median(pairedDef),
          unit: "µs",
          note: `${ROUNDS} rounds of ${PER_ROUND} fan-outs; rounds' range ${pairedDefSorted[0]!.toFixed(1)} .. ${pairedDefSorted[pairedDefSorted.length - 1]!.toFixed(1)} µs`,
        },
      "fan-outs/s, every fan-out traced (parentbased_always_on)": { value: 1e6 / onWall, unit: "1/s" },
      "throughput cost of tracing every fan-out (wall)": { value: (1 - offWall / onWall) * 100, unit: "%" },
      "CPU per fan-out, every fan-out traced": { value: onCpu, unit: "µs" },
      "telemetry CPU per fan-out, every fan-out traced (9 spans recorded and exported over OTLP/gRPC, metrics, recorder)":
        {
          value: onCpu - offCpu,
          unit: "µs",
          note: "what a traced fan-out pays on top of its own work, before any effect on the rest of the process",
        },
      "spans exported": {
        value: spans,
        unit: "spans",
        note: `1 fan-out + 8 branch spans per fan-out: ${9 * fanouts} started (a shortfall: dropped, figures too low)`,
      },
      "peer Branch server span, recorded and exported: CPU per call": { value: median(recorded), unit: "µs" },
      "peer Branch server span, caller not sampled: CPU per call": { value: median(unsampled), unit: "µs" },
      "peer Branch server span, no caller context: CPU per call": {
        value: median(noContext),
        unit: "µs",
        note: "under the node's default sampler (root: rate-limited, the bucket long empty); 'caller not sampled' minus this is what receiving an unsampled traceparent costs a peer",
      },
      "peer Branch server span, caller not sampled, with the node's sampling hints: CPU per call": {
        value: median(unsampledHinted),
        unit: "µs",
        note: "the server is given sdk.sampling, as a node's is: no SDK span under an unsampled caller, the handler runs in the caller's context",
      },
      "peer Branch server span, no caller context, with the node's sampling hints: CPU per call": {
        value: median(noContextHinted),
        unit: "µs",
        note: "the rate limiter declines (its bucket long empty): no SDK span, a fresh unsampled trace id",
      },
      "peer server span's recording and export, per span": {
        value: median(recorded) - median(unsampled),
        unit: "µs",
        note: "extract, start, attributes, end, batch, OTLP protobuf serialization and export",
      },
      ...floor,
      "fan-out tracer hooks per unsampled fan-out of 8 branches, with the node's sampling hints": {
        value: median(hintedRuns),
        unit: "µs",
        note: "no SDK span for a fan-out the sampler declines, nothing kept per branch",
      },
      "fan-out tracer hooks per unsampled fan-out of 8 branches, without hints (the SDK asked)": {
        value: median(askedRuns),
        unit: "µs",
        note: "a non-recording SDK span per fan-out, nothing kept per branch",
      },
      "metrics hooks per fan-out of 8 answered branches (counts, histograms, branch durations)": {
        value: median(metricsRuns),
        unit: "µs",
        note: "FanoutMetrics alone, a reader collecting every 64 fan-outs",
      },
      "flight recorder hooks per fan-out of 8 answered branches": {
        value: median(recorderRuns),
        unit: "µs",
        note: "FlightRecorder alone (256 decisions kept), no trace id lookup",
      },
    });
  } finally {
    context.disable();
    propagation.disable();
    sink.stop();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) await run();
