/**
 * Routing telemetry is live in a node that routes: a real coordinator node on loopback (routing
 * policy mabp, k = 1, the node's own telemetry set-up) in front of two context-worker peers. Each
 * routed branch span carries `tailswarm.route.*`, and the per-peer routing instruments are exported.
 */
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  PeriodicExportingMetricReader,
} from "@opentelemetry/sdk-metrics";
import type { DataPoint, MetricData } from "@opentelemetry/sdk-metrics";
import { InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/node/config/load-config.js";
import { NodeClient } from "../../src/node/client.js";
import { SwarmNode } from "../../src/node/node.js";
import { ATTR, SPAN_BRANCH } from "../../src/telemetry/attributes.js";
import { ROUTE_ATTR, ROUTE_METRIC } from "../../src/telemetry/routing-telemetry.js";
import { nodeTelemetry } from "../../src/telemetry/sdk/node-telemetry.js";
import { startNode, untilPeersUp } from "./helpers/in-process-node.js";

const spans = new InMemorySpanExporter();
const metrics = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
const reader = new PeriodicExportingMetricReader({ exporter: metrics, exportIntervalMillis: 3_600_000 });
const peers: SwarmNode[] = [];
let coordinator: SwarmNode | undefined;

beforeAll(async () => {
  const handlers = [{ kind: "context", use: "context", options: { capacity: 4, unitMs: 1 } }];
  for (const id of ["rt-1", "rt-2"]) {
    peers.push(await startNode(["--node-id", id, "--listen", "127.0.0.1:0"], { handlers }));
  }
  const { config } = await loadConfig({
    argv: [
      ...["--node-id", "rt-coord", "--listen", "127.0.0.1:0"],
      ...["--peers", peers.map((p) => p.address).join(",")],
      ...["--probe-interval-ms", "300", "--probe-timeout-ms", "300"],
      ...["--routing-policy", "mabp", "--routing-k", "1"],
    ],
    env: {},
  });
  coordinator = await SwarmNode.start({
    // every new trace sampled, so that each routed branch has a recorded span to read
    config: { ...config, telemetry: { ...config.telemetry, tracesPerSecond: 1_000_000 } },
    telemetry: nodeTelemetry({
      spanProcessors: [new SimpleSpanProcessor({ exporter: spans })],
      metricReaders: [reader],
    }),
  });
  await untilPeersUp(coordinator, 2);
}, 60_000);

afterAll(async () => {
  await coordinator?.stop();
  for (const p of peers) p.forceStop();
});

describe("routing telemetry in a routing node", () => {
  it("puts tailswarm.route.* on each routed branch span and exports the per-peer routing instruments", async () => {
    const client = new NodeClient(coordinator!.address);
    try {
      for (let i = 0; i < 3; i++) {
        const reply = await client.coordinate(
          { kind: "context", payload: { requestClass: "rag", context: `c${i % 2}` } },
          5_000,
        );
        expect(reply.branches).toHaveLength(1);
      }
    } finally {
      client.close();
    }

    const branches = spans.getFinishedSpans().filter((s) => s.name === SPAN_BRANCH);
    expect(branches.length).toBeGreaterThanOrEqual(3);
    for (const b of branches) {
      expect(["rt-1", "rt-2"]).toContain(b.attributes[ATTR.peer]);
      expect(b.attributes).toMatchObject({ [ROUTE_ATTR.policy]: "mabp", [ROUTE_ATTR.rank]: 0 });
      expect(typeof b.attributes[ROUTE_ATTR.score]).toBe("number");
      expect(typeof b.attributes[ROUTE_ATTR.speculationFeasible]).toBe("boolean");
      expect(["fresh", "stale", "unknown"]).toContain(b.attributes[ROUTE_ATTR.viewFreshness]);
    }

    await reader.forceFlush();
    const byName = new Map<string, MetricData>();
    for (const rm of metrics.getMetrics())
      for (const sm of rm.scopeMetrics) for (const m of sm.metrics) byName.set(m.descriptor.name, m);
    for (const name of [ROUTE_METRIC.backlog, ROUTE_METRIC.memoryUsed]) {
      const points = (byName.get(name)?.dataPoints ?? []) as DataPoint<number>[];
      expect(points.map((p) => p.attributes[ATTR.peer]).sort(), name).toEqual(["rt-1", "rt-2"]);
    }
  }, 30_000);
});
