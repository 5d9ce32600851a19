/**
 * The why of every hedge, where a user reads it: the counters (issued, won, lost, refused by reason,
 * lost work), the `tailswarm.hedged_fanout` span with one event per decision, and the flight recorder's
 * record as `tailswarm decisions` prints it — all from one HedgedFanout over the in-memory transport.
 */
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from "@opentelemetry/sdk-metrics";
import type { DataPoint, MetricData } from "@opentelemetry/sdk-metrics";
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from "@opentelemetry/sdk-trace";
import { describe, expect, it } from "vitest";
import { SimClock } from "../../src/clock/sim-clock.js";
import { AbandonLedger } from "../../src/engine/abandon-ledger.js";
import { HedgedFanout } from "../../src/engine/hedge-fanout.js";
import type { HedgeObserver } from "../../src/engine/hedge-outcome.js";
import { MemoryTransport } from "../../src/engine/memory-transport.js";
import { LatencyBook } from "../../src/estimate/latency-book.js";
import type { HedgePolicy } from "../../src/hedge/types.js";
import * as grpc from "@grpc/grpc-js";
import {
  addDecisionsService,
  decisionsSource,
  fetchDecisions,
} from "../../src/telemetry/decisions-service.js";
import { FlightRecorder } from "../../src/telemetry/flight-recorder.js";
import { formatDecisions } from "../../src/telemetry/format-decisions.js";
import {
  EVENT_HEDGE_DECISION,
  HEDGE_ATTR,
  HEDGE_METRIC,
  HedgeTelemetry,
  SPAN_HEDGED_FANOUT,
} from "../../src/telemetry/hedge-metrics.js";

const START = 1_000_000;

function setup(policy: HedgePolicy) {
  const clock = new SimClock({ start: START });
  const transport = new MemoryTransport(clock, { seed: 1 });
  // a answers after 300 ms (its tail), b and c after ~12 ms
  transport.addPeer("a", { latency: 300 });
  transport.addPeer("b", { latency: 12 });
  transport.addPeer("c", { latency: 13 });
  const book = new LatencyBook({ windowMs: 600_000, minSamples: 20 }, clock);
  for (let i = 0; i < 100; i++) {
    book.record("a", i % 10 === 0 ? 300 : 15, START);
    book.record("b", 10 + (i % 5), START);
    book.record("c", 10 + (i % 6), START);
  }
  const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 });
  const meters = new MeterProvider({ readers: [reader] });
  const spans = new InMemorySpanExporter();
  const tracers = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter: spans })] });
  const telemetry = new HedgeTelemetry({
    meter: meters.getMeter("test"),
    tracer: tracers.getTracer("test"),
    clock,
  });
  const recorder = new FlightRecorder({ clock });
  const observer: HedgeObserver = {
    onHedgedFanoutEnd: (o) => {
      telemetry.onHedgedFanoutEnd(o);
      recorder.onHedgedFanoutEnd(o);
    },
    onHedgedFanoutSettled: (id, s) => {
      telemetry.onHedgedFanoutSettled(id, s);
      recorder.onHedgedFanoutSettled(id, s);
    },
  };
  const hedged = new HedgedFanout({
    transport,
    book,
    clock,
    ledger: new AbandonLedger({ windowMs: 600_000 }),
    policy,
    observer,
  });
  const collect = async (): Promise<Map<string, MetricData>> => {
    exporter.reset();
    await reader.forceFlush();
    const out = new Map<string, MetricData>();
    for (const rm of exporter.getMetrics())
      for (const sm of rm.scopeMetrics) for (const m of sm.metrics) out.set(m.descriptor.name, m);
    return out;
  };
  return { clock, hedged, recorder, spans, collect };
}

const valueOf = (m: MetricData | undefined, attrs: Record<string, unknown>): number | undefined =>
  (m?.dataPoints as DataPoint<number>[] | undefined)?.find((d) =>
    Object.entries(attrs).every(([k, v]) => d.attributes[k] === v),
  )?.value;

describe("hedge telemetry and the flight recorder", () => {
  it("exports a backup issued, won and landable, the primary's lost work, and the why per decision", async () => {
    const s = setup({ name: "fixed-delay", delayMs: 20 });
    const out = await s.clock.runUntilSettled(
      s.hedged.run({ kind: "replica", payload: null }, { replicas: ["a", "b", "c"], k: 1, budgetMs: 200 }),
    );
    const settled = await s.clock.runUntilSettled(out.settled);
    expect(out.backups).toHaveLength(1);
    expect(out.backups[0]!.won).toBe(true);
    const m = await s.collect();
    const backups = m.get(HEDGE_METRIC.backups);
    const policy = { [HEDGE_ATTR.policy]: "fixed-delay" };
    expect(valueOf(backups, { ...policy, [HEDGE_ATTR.result]: "issued", [HEDGE_ATTR.landable]: true })).toBe(
      1,
    );
    expect(valueOf(backups, { ...policy, [HEDGE_ATTR.result]: "won" })).toBe(1);
    expect(valueOf(m.get(HEDGE_METRIC.lostWork), policy)).toBeCloseTo(settled.abandonCostMs);
    expect(settled.abandonCostMs).toBeGreaterThan(0);

    const [span] = s.spans.getFinishedSpans().filter((x) => x.name === SPAN_HEDGED_FANOUT);
    expect(span?.attributes[HEDGE_ATTR.policy]).toBe("fixed-delay");
    const events = span!.events.filter((e) => e.name === EVENT_HEDGE_DECISION);
    expect(events).toHaveLength(1);
    expect(events[0]!.attributes).toMatchObject({
      [HEDGE_ATTR.action]: "send",
      [HEDGE_ATTR.reason]: "delay-reached",
      [HEDGE_ATTR.backup]: "b",
      [HEDGE_ATTR.delayMs]: 20,
      [HEDGE_ATTR.landable]: true,
    });

    const [d] = s.recorder.last(1);
    expect(d).toMatchObject({ mode: "replicated", reason: "fixed-delay", requirement: "quorum:1" });
    expect(d!.lostWorkMs).toBeCloseTo(settled.abandonCostMs);
    expect(d!.hedges).toEqual([
      expect.stringMatching(
        /^at 20 ms, backup b for a sent \(delay-reached\): remaining 180 ms, p99\(b\) [\d.]+ ms, cost [\d.]+ ms, gain [\d.]+ ms, .*delay 20 ms, can land$/,
      ),
    ]);
    const text = formatDecisions([d!]);
    expect(text).toContain("REPLICATED  (fixed-delay)");
    expect(text).toContain(
      "because any 1 of 3 replicas under fixed-delay: 1 backup(s) sent (1 won), 0 refused",
    );
    expect(text).toContain("  hedge at 20 ms, backup b for a sent (delay-reached)");
  });

  it("counts a refusal by its reason and says why on the span, for each spare asked", async () => {
    const s = setup({ name: "gated" });
    // a 10 ms budget: no spare's p99 + cost fits; b is refused, then c
    await s.clock.runUntilSettled(
      s.hedged.run({ kind: "replica", payload: null }, { replicas: ["a", "b", "c"], k: 1, budgetMs: 10 }),
    );
    const m = await s.collect();
    expect(
      valueOf(m.get(HEDGE_METRIC.refused), {
        [HEDGE_ATTR.policy]: "gated",
        [HEDGE_ATTR.reason]: "cannot-land",
      }),
    ).toBe(2);
    const [span] = s.spans.getFinishedSpans().filter((x) => x.name === SPAN_HEDGED_FANOUT);
    expect(
      span!.events.map((e) => [e.attributes![HEDGE_ATTR.backup], e.attributes![HEDGE_ATTR.reason]]),
    ).toEqual([
      ["b", "cannot-land"],
      ["c", "cannot-land"],
    ]);
    expect(span!.events[0]!.attributes).toMatchObject({
      [HEDGE_ATTR.action]: "refuse",
      [HEDGE_ATTR.backupP99Kind]: "known",
    });
    const hedges = s.recorder.last(1)[0]!.hedges!;
    expect(hedges[0]).toMatch(/backup b for a refused \(cannot-land\): remaining 10 ms, p99\(b\) [\d.]+ ms/);
    expect(hedges[1]).toMatch(/backup c for a refused \(cannot-land\)/);
  });

  it("serves a replicated fan-out's hedge lines through tailswarm.v1.Decisions unchanged", async () => {
    const s = setup({ name: "gated" });
    await s.clock.runUntilSettled(
      s.hedged.run({ kind: "replica", payload: null }, { replicas: ["a", "b", "c"], k: 1, budgetMs: 10 }),
    );
    const server = new grpc.Server();
    addDecisionsService(server, decisionsSource("node-h", s.recorder));
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (e, p) =>
        e ? reject(e) : resolve(p),
      ),
    );
    try {
      const reply = await fetchDecisions(`127.0.0.1:${port}`, { last: 1 });
      expect(reply.decisions).toEqual(s.recorder.last(1));
      expect(reply.decisions[0]!.hedges).toHaveLength(2);
    } finally {
      server.forceShutdown();
    }
  });
});
