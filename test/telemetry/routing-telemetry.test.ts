import { context } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from "@opentelemetry/sdk-metrics";
import type { DataPoint, MetricData } from "@opentelemetry/sdk-metrics";
import { TracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace";
import { describe, expect, it } from "vitest";
import { SimClock } from "../../src/clock/sim-clock.js";
import { Coordinator } from "../../src/engine/coordinator.js";
import { MemoryTransport } from "../../src/engine/memory-transport.js";
import { RouteAdapter } from "../../src/engine/route-adapter.js";
import { LatencyBook } from "../../src/estimate/latency-book.js";
import { predicateModel } from "../../src/decision/predicate-model.js";
import { contextSignature } from "../../src/routing/context-task.js";
import { PeerViewBook } from "../../src/routing/peer-view-book.js";
import { explainMabp } from "../../src/routing/policies/mabp.js";
import { PrimitiveTable } from "../../src/routing/primitives.js";
import { createRouter } from "../../src/routing/router.js";
import { ATTR, SPAN_BRANCH } from "../../src/telemetry/attributes.js";
import { FanoutTracer } from "../../src/telemetry/fanout-tracer.js";
import { instrumentTransport } from "../../src/telemetry/instrument-transport.js";
import {
  ROUTE_ATTR,
  ROUTE_METRIC,
  RoutingGauges,
  routeSpanTransport,
} from "../../src/telemetry/routing-telemetry.js";

const primitives = new PrimitiveTable({
  "rag/0": {
    noReuse: { work: 4, penalty: 4, successors: [{ key: "rag/1", p: 0.6 }] },
    reuse: { work: 1, penalty: 1, successors: [{ key: "rag/1", p: 0.1 }] },
  },
});

// The branch span is active while the transport sends only with a context manager (the SDK setup registers one).
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());

describe("routing telemetry", () => {
  it("puts the MABP score components on the branch span", async () => {
    const clock = new SimClock({ start: 1_000 });
    const exporter = new InMemorySpanExporter();
    const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
    const tracer = new FanoutTracer({ tracer: provider.getTracer("t"), clock });
    const views = new PeerViewBook();
    const router = createRouter("mabp", { primitives, nu: 5 });
    const adapter = new RouteAdapter({ router, views, explain: (t, v) => explainMabp(t, v, primitives, 5) });
    const mem = new MemoryTransport(clock).addPeer("holder", { latency: 5 }).addPeer("other", { latency: 5 });
    views.update(
      "holder",
      {
        queues: { "rag/0": 2, "rag/1": 10 },
        signatures: [contextSignature("rag", "c")],
        memoryUsed: 1,
        memoryBudget: 4,
        capacity: 1,
        stateAt: 1_000,
      },
      1_000,
    );
    views.update(
      "other",
      { queues: {}, signatures: [], memoryUsed: 0, memoryBudget: 4, capacity: 1, stateAt: 1_000 },
      1_000,
    );
    const coordinator = new Coordinator({
      transport: instrumentTransport(routeSpanTransport(mem, adapter), { tracer }),
      book: new LatencyBook({}, clock),
      clock,
      observer: tracer,
    });
    const model = predicateModel<unknown, unknown>({
      prior: null,
      decide: (a) => a.size,
      canFlip: (a, o) => a.size === 0 && o.length > 0,
    });
    const task = { kind: "context", payload: { requestClass: "rag", context: "c" } };
    await clock.runUntilSettled(
      coordinator.fanOut(task, {
        peers: ["holder", "other"],
        k: 1,
        budgetMs: 100,
        model,
        router: adapter.route,
      }),
    );
    const branch = exporter.getFinishedSpans().find((s) => s.name === SPAN_BRANCH)!;
    expect(branch.attributes[ATTR.peer]).toBe("holder");
    // W = 0 − 2 − 0.1·10 − 5·1 = −8 at work 1
    expect(branch.attributes).toMatchObject({
      [ROUTE_ATTR.policy]: "mabp",
      [ROUTE_ATTR.hit]: true,
      [ROUTE_ATTR.queueDifferential]: -2,
      [ROUTE_ATTR.successorPressure]: 1,
      [ROUTE_ATTR.penalty]: 1,
      [ROUTE_ATTR.work]: 1,
      [ROUTE_ATTR.score]: -8,
      [ROUTE_ATTR.viewFreshness]: "fresh",
    });
  });

  it("exports per-peer backlog, memory use, hit ratio and churn from the view book", async () => {
    const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
    const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 });
    const provider = new MeterProvider({ readers: [reader] });
    const clock = new SimClock({ start: 0 });
    const views = new PeerViewBook();
    views.update(
      "p",
      {
        queues: { "rag/0": 3, "rag/1": 1 },
        signatures: [1, 2],
        memoryUsed: 2,
        memoryBudget: 4,
        capacity: 1,
        stateAt: 0,
        served: 10,
        hits: 7,
        churn: 5,
      },
      0,
    );
    const gauges = new RoutingGauges(provider.getMeter("t"), clock, views);
    await reader.forceFlush();
    const byName = new Map<string, MetricData>();
    for (const rm of exporter.getMetrics())
      for (const sm of rm.scopeMetrics) for (const m of sm.metrics) byName.set(m.descriptor.name, m);
    const value = (name: string) => (byName.get(name)?.dataPoints[0] as DataPoint<number> | undefined)?.value;
    expect(value(ROUTE_METRIC.backlog)).toBe(4);
    expect(value(ROUTE_METRIC.memoryUsed)).toBe(2);
    expect(value(ROUTE_METRIC.hitRatio)).toBeCloseTo(0.7);
    expect(value(ROUTE_METRIC.churn)).toBe(5);
    expect(byName.get(ROUTE_METRIC.backlog)?.dataPoints[0]?.attributes[ATTR.peer]).toBe("p");
    gauges.close();
    await provider.shutdown();
  });
});
