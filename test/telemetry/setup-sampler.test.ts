/**
 * startTelemetry's sampler: the default rate limit, its counts as a metric, and a refused sampler
 * refusing the whole set-up before anything (a Prometheus server) has started.
 */
import { createServer } from "node:net";
import { MetricReader } from "@opentelemetry/sdk-metrics";
import { afterEach, describe, expect, it } from "vitest";
import { METRIC_TRACE_ROOTS, startTelemetry } from "../../src/telemetry/sdk/setup.js";
import type { TelemetrySdk } from "../../src/telemetry/sdk/setup.js";
import { freePorts } from "../../src/testbed/free-port.js";

class TestReader extends MetricReader {
  protected onForceFlush(): Promise<void> {
    return Promise.resolve();
  }
  protected onShutdown(): Promise<void> {
    return Promise.resolve();
  }
}

let sdk: TelemetrySdk | undefined;
afterEach(async () => {
  await sdk?.shutdown();
  sdk = undefined;
});

describe("startTelemetry's sampler", () => {
  it("starts at most tracesPerSecond new traces and counts both kinds in tailswarm.trace.roots", async () => {
    const reader = new TestReader();
    sdk = await startTelemetry({ env: {}, tracesPerSecond: 3, metricReaders: [reader] });
    expect(sdk.sampler).toMatch(/^ParentBased\{root=RateLimitingSampler\{3\/s\}/);
    const tracer = sdk.tracerProvider.getTracer("test");
    const recorded = Array.from({ length: 8 }, () => {
      const span = tracer.startSpan("tailswarm.fanout");
      const recording = span.isRecording();
      span.end();
      return recording;
    });
    expect(recorded.filter(Boolean).length).toBe(3);
    const { resourceMetrics } = await reader.collect();
    const metric = resourceMetrics.scopeMetrics
      .flatMap((s) => s.metrics)
      .find((m) => m.descriptor.name === METRIC_TRACE_ROOTS);
    expect(metric?.descriptor.unit).toBe("{trace}");
    const points = Object.fromEntries(
      (metric?.dataPoints ?? []).map((p) => [String(p.attributes["tailswarm.trace.sampled"]), p.value]),
    );
    expect(points).toEqual({ true: 3, false: 5 });
  });

  it("has no such metric when OTEL_TRACES_SAMPLER names the sampler", async () => {
    const reader = new TestReader();
    sdk = await startTelemetry({ env: { OTEL_TRACES_SAMPLER: "always_on" }, metricReaders: [reader] });
    expect(sdk.sampler).toBe("AlwaysOnSampler");
    const { resourceMetrics } = await reader.collect();
    const names = resourceMetrics.scopeMetrics.flatMap((s) => s.metrics).map((m) => m.descriptor.name);
    expect(names).not.toContain(METRIC_TRACE_ROOTS);
  });

  it("refuses a misspelt sampler before it starts the Prometheus server", async () => {
    const [port] = await freePorts(1);
    await expect(
      startTelemetry({
        env: { OTEL_TRACES_SAMPLER: "ratelimited" },
        prometheusPort: port,
        prometheusHost: "127.0.0.1",
      }),
    ).rejects.toMatchObject({ code: "INVALID_CONFIG", message: expect.stringContaining('"ratelimited"') });
    // The port is still free: nothing was left listening.
    await new Promise<void>((resolve, reject) => {
      const s = createServer();
      s.once("error", reject);
      s.listen(port, "127.0.0.1", () => s.close(() => resolve()));
    });
  });
});
