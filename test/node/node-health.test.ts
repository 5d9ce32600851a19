/** The node's peer health counts each ejection (by cause), refusal and return in OTel. */
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from "@opentelemetry/sdk-metrics";
import type { DataPoint } from "@opentelemetry/sdk-metrics";
import { describe, expect, it } from "vitest";
import { createNodeHealth } from "../../src/node/node-health.js";
import { silentLogger } from "../../src/node/logger.js";
import { ATTR_HEALTH_CAUSE, HEALTH_METRIC, HealthMetrics } from "../../src/telemetry/health-metrics.js";

async function counts(reader: PeriodicExportingMetricReader, exporter: InMemoryMetricExporter) {
  exporter.reset();
  await reader.forceFlush();
  const out = new Map<string, number>();
  for (const rm of exporter.getMetrics())
    for (const sm of rm.scopeMetrics)
      for (const m of sm.metrics)
        for (const p of m.dataPoints as DataPoint<number>[]) {
          const cause = p.attributes[ATTR_HEALTH_CAUSE];
          out.set(
            cause === undefined ? m.descriptor.name : `${m.descriptor.name}{${cause as string}}`,
            p.value,
          );
        }
  return out;
}

describe("node health metrics", () => {
  it("counts ejections by cause, refusals past maxEjectedPercent, and returns", async () => {
    const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
    const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 });
    const provider = new MeterProvider({ readers: [reader] });
    const health = createNodeHealth(
      {
        failureThreshold: 2,
        outlierFactor: 5,
        maxEjectedPercent: 20,
        baseEjectionMs: 50,
        maxEjectionMs: 1_000,
      },
      {
        book: { tracks: () => false, estimate: () => ({}) as never },
        log: silentLogger,
        metrics: new HealthMetrics(provider.getMeter("test")),
      },
    );
    const now = Date.now();
    for (const p of ["a", "b", "c", "d", "e"]) health.report(p, { kind: "ok", latencyMs: 1 }, now);
    // a fails twice: ejected (1 of 5 is 20%)
    health.report("a", { kind: "failed" }, now);
    health.report("a", { kind: "failed" }, now);
    // b's answers are rejected twice: a second ejection would pass 20%, so it is refused
    health.report("b", { kind: "rejected" }, now);
    health.report("b", { kind: "rejected" }, now);
    // a's ejection expires; a good branch on probation returns it
    health.report("a", { kind: "ok", latencyMs: 1 }, now + 100);
    const c = await counts(reader, exporter);
    expect(c.get(`${HEALTH_METRIC.ejections}{failed}`)).toBe(1);
    expect(c.get(`${HEALTH_METRIC.refused}{rejected}`)).toBe(1);
    expect(c.get(HEALTH_METRIC.returns)).toBe(1);
    await provider.shutdown();
  });
});
