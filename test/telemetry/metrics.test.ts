import {
  AggregationTemporality,
  DataPointType,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from "@opentelemetry/sdk-metrics";
import type { DataPoint, Histogram, MetricData } from "@opentelemetry/sdk-metrics";
import { describe, expect, it } from "vitest";
import { ATTR } from "../../src/telemetry/attributes.js";
import { BRANCH_DURATION } from "../../src/telemetry/branch-durations.js";
import { FanoutMetrics, METRIC } from "../../src/telemetry/metrics.js";
import { instrumentTransport } from "../../src/telemetry/instrument-transport.js";
import { PEER_METRIC } from "../../src/telemetry/peer-gauges.js";
import { predicateModel } from "../../src/decision/predicate-model.js";
import { collectModel, rig, task } from "./helpers.js";

function setup() {
  const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 });
  const provider = new MeterProvider({ readers: [reader] });
  const ref: { m?: FanoutMetrics } = {};
  const r = rig(
    {
      onBranchEnd: (id, rec) => ref.m!.onBranchEnd(id, rec),
      onFanoutEnd: (o) => ref.m!.onFanoutEnd(o),
      onViolation: (id, v) => ref.m!.onViolation(id, v),
    },
    // metrics is created below (it needs the rig's clock and book): bind it when the branch is sent
    (t) => ({
      branch: (peer, req, opts) => instrumentTransport(t, { metrics: ref.m }).branch(peer, req, opts),
    }),
  );
  const metrics = new FanoutMetrics({ meter: provider.getMeter("test"), clock: r.clock, estimates: r.book });
  ref.m = metrics;
  /** Collects and returns the metrics by name (the last export). */
  const collect = async (): Promise<Map<string, MetricData>> => {
    exporter.reset();
    await reader.forceFlush();
    const out = new Map<string, MetricData>();
    for (const rm of exporter.getMetrics()) {
      for (const sm of rm.scopeMetrics) for (const m of sm.metrics) out.set(m.descriptor.name, m);
    }
    return out;
  };
  return { ...r, metrics, collect, provider };
}

function points(m: MetricData | undefined): DataPoint<number>[] {
  if (m === undefined) return [];
  return m.dataPoints as DataPoint<number>[];
}

function valueOf(m: MetricData | undefined, attrs: Record<string, unknown>): number | undefined {
  const p = points(m).find((d) => Object.entries(attrs).every(([k, v]) => d.attributes[k] === v));
  return p?.value;
}

describe("FanoutMetrics", () => {
  it("counts horizon probes issued and completed, and charges them no lost work", async () => {
    const h = setup();
    h.transport.addPeer("slow", { latency: 500, handler: () => "slow" }); // never sampled: a candidate
    const out = await h.clock.runUntilSettled(
      h.coordinator.fanOut(task, {
        peers: ["slow"],
        budgetMs: 50,
        model: collectModel(),
        policy: "always-sync",
        fallback: () => "x",
      }),
    );
    expect(out.branches[0]?.probe).toBe(true);
    await h.clock.runUntilIdle();
    const m = await h.collect();
    expect(valueOf(m.get(METRIC.horizonProbes), { [ATTR.probeState]: "issued" })).toBe(1);
    expect(valueOf(m.get(METRIC.horizonProbes), { [ATTR.probeState]: "completed" })).toBe(1);
    expect(valueOf(m.get(METRIC.horizonProbes), { [ATTR.probeState]: "expired" })).toBeUndefined();
    expect(valueOf(m.get(METRIC.lostWork), { [ATTR.branchOutcome]: "abandoned" })).toBeUndefined();
    expect(h.book.estimate("slow", h.clock.now()).samples).toBe(1); // the late answer, as a sample
  });

  it("counts fan-outs by mode and reason, committed fan-outs by relevance, branches by outcome and pivotality", async () => {
    const h = setup();
    for (const [p, ms] of [
      ["a", 10],
      ["b", 12],
    ] as const) {
      h.transport.addPeer(p, { latency: ms, handler: () => p });
      h.warm(p, ms);
    }
    h.transport.addPeer("c", { latency: 500, handler: () => "c" });
    h.warm("c", 10);
    for (let i = 0; i < 3; i++) {
      await h.clock.runUntilSettled(
        h.coordinator.fanOut(task, { peers: ["a", "b"], budgetMs: 200, model: collectModel() }),
      );
    }
    await h.clock.runUntilSettled(
      h.coordinator.fanOut(task, { peers: ["a", "b", "c"], budgetMs: 100, model: collectModel() }),
    );
    await h.clock.runUntilSettled(
      h.coordinator.fanOut(task, { peers: ["a"], budgetMs: 5, model: collectModel(), fallback: () => "x" }),
    );
    await h.clock.runUntilIdle();
    const m = await h.collect();

    const fanouts = m.get(METRIC.decisions)!;
    expect(fanouts.descriptor.unit).toBe("{fanout}");
    expect(fanouts.dataPointType).toBe(DataPointType.SUM);
    expect(
      valueOf(fanouts, { [ATTR.mode]: "speculate", [ATTR.reason]: "budget-exceeds-p99-plus-abandon-cost" }),
    ).toBe(4);
    expect(valueOf(fanouts, { [ATTR.mode]: "degrade", [ATTR.reason]: "budget-at-or-below-p50" })).toBe(1);

    // the four speculative fan-outs decided on answers, each an action other than the model's prior
    // (collectModel decides "" with no answers, the answers joined otherwise); the degraded one is not
    // committed
    const committed = m.get(METRIC.committed)!;
    expect(committed.descriptor.unit).toBe("{fanout}");
    expect(points(committed)).toHaveLength(1);
    expect(
      valueOf(committed, {
        [ATTR.mode]: "speculate",
        [ATTR.policy]: "p99-boundary",
        [ATTR.decisionRelevant]: true,
      }),
    ).toBe(4);
    expect(valueOf(m.get(METRIC.relevantCommitRatio), {})).toBe(1);

    const branches = m.get(METRIC.outcomes)!;
    expect(
      valueOf(branches, {
        [ATTR.mode]: "speculate",
        [ATTR.branchOutcome]: "committed",
        [ATTR.branchPivotal]: true,
      }),
    ).toBe(8);
    expect(valueOf(branches, { [ATTR.branchOutcome]: "abandoned", [ATTR.branchPivotal]: false })).toBe(1);

    // peer c lost 100 ms of work when its branch was abandoned at the deadline
    expect(valueOf(m.get(METRIC.lostWork), { [ATTR.branchOutcome]: "abandoned" })).toBe(0.1);
    expect(m.get(METRIC.lostWork)!.descriptor.unit).toBe("s");

    expect(valueOf(m.get(METRIC.commitRatio), {})).toBeCloseTo(8 / 9);
    expect(valueOf(m.get(METRIC.pivotalCommitRatio), {})).toBe(1);

    // branch durations: the 8 answers of a and b, in seconds; c's abandoned branch is censored, not here
    const durations = m.get(BRANCH_DURATION)!;
    expect(durations.descriptor.unit).toBe("s");
    const a = points(durations).find((p) => p.attributes[ATTR.peer] === "a")!.value as unknown as Histogram;
    expect(a.count).toBe(4);
    expect(a.sum).toBeCloseTo(0.04);
    expect(
      points(durations)
        .map((p) => p.attributes[ATTR.peer])
        .sort(),
    ).toEqual(["a", "b"]);
    expect(valueOf(m.get(METRIC.inFlight), {})).toBe(0);

    const budget = points(m.get(METRIC.budget)).find((p) => p.attributes[ATTR.mode] === "speculate")!;
    expect((budget.value as unknown as Histogram).count).toBe(4);
    expect((budget.value as unknown as Histogram).sum).toBeCloseTo(0.7);
    const cost = m.get(METRIC.costEstimate)!;
    expect(cost.descriptor.unit).toBe("s");
    const gain = m.get(METRIC.informationGain)!;
    expect(gain.descriptor.unit).toBe("bit");
  });

  it("counts a committed fan-out whose answers leave the local decision as it was as not decision-relevant", async () => {
    const h = setup();
    h.transport.addPeer("a", { latency: 10, handler: () => "a" });
    h.warm("a", 10);
    // the action is "none" with or without answers: the fan-out changed nothing
    const unmoved = predicateModel<string, string>({
      name: "unmoved",
      prior: "none",
      decide: () => "none",
      canFlip: (_answers, outstanding) => outstanding.length > 0,
      parseAnswer: (raw) => String(raw),
    });
    await h.clock.runUntilSettled(
      h.coordinator.fanOut(task, { peers: ["a"], budgetMs: 200, model: unmoved }),
    );
    await h.clock.runUntilSettled(
      h.coordinator.fanOut(task, {
        peers: ["a"],
        budgetMs: 200,
        model: collectModel(),
        policy: "always-sync",
      }),
    );
    const m = await h.collect();
    const committed = m.get(METRIC.committed)!;
    expect(
      valueOf(committed, {
        [ATTR.mode]: "speculate",
        [ATTR.policy]: "p99-boundary",
        [ATTR.decisionRelevant]: false,
      }),
    ).toBe(1);
    expect(
      valueOf(committed, {
        [ATTR.mode]: "synchronous",
        [ATTR.policy]: "always-sync",
        [ATTR.decisionRelevant]: true,
      }),
    ).toBe(1);
    expect(valueOf(m.get(METRIC.relevantCommitRatio), {})).toBe(0.5);
  });

  it("counts branches in flight while a fan-out waits", async () => {
    const h = setup();
    for (const p of ["a", "b", "c"]) {
      h.transport.addPeer(p, { latency: 50, handler: () => p });
      h.warm(p, 50);
    }
    const pending = h.coordinator.fanOut(task, {
      peers: ["a", "b", "c"],
      budgetMs: 500,
      model: collectModel(),
    });
    await h.clock.advance(10);
    expect(valueOf((await h.collect()).get(METRIC.inFlight), {})).toBe(3);
    await h.clock.runUntilSettled(pending);
    await h.clock.runUntilIdle();
    expect(valueOf((await h.collect()).get(METRIC.inFlight), {})).toBe(0);
  });

  it("counts budget violations and deadline misses", async () => {
    const h = setup();
    h.transport.addPeer("a", { latency: 50, handler: () => "a" });
    h.warm("a", 50);
    await expect(
      h.clock.runUntilSettled(
        h.coordinator.fanOut(task, { peers: ["a"], budgetMs: 20, model: collectModel() }),
      ),
    ).rejects.toThrow();
    await h.clock.runUntilSettled(
      h.coordinator.fanOut(task, { peers: ["a"], budgetMs: -1, model: collectModel(), fallback: () => "x" }),
    );
    const m = await h.collect();
    expect(valueOf(m.get(METRIC.violations), { [ATTR.violationCode]: "SPECULATION_BUDGET_VIOLATION" })).toBe(
      2,
    );
    expect(valueOf(m.get(METRIC.deadlineMisses), { [ATTR.mode]: "degrade" })).toBe(1);
  });

  it("counts a fan-out that had no answer by its deadline, and not one that was answered", async () => {
    const h = setup();
    h.transport.addPeer("slow", { latency: 50, handler: () => "x" });
    h.transport.addPeer("fast", { latency: 1, handler: () => "x" });
    const model = predicateModel<unknown, string>({
      prior: "hold",
      decide: () => "act",
      canFlip: () => true,
    });
    const run = (peers: string[]) =>
      h.clock.runUntilSettled(
        h.coordinator.fanOut(task, { peers, budgetMs: 20, model, policy: "always-sync" }),
      );
    const none = await run(["slow"]);
    expect(none).toMatchObject({ answered: 0, degraded: false, action: "hold" });
    await run(["fast"]);
    const m = await h.collect();
    expect(valueOf(m.get(METRIC.noAnswer), { [ATTR.mode]: "synchronous" })).toBe(1);
  });

  it("records every fan-out's histograms across batches, and those still queued at collection and at close", async () => {
    const h = setup();
    h.transport.addPeer("a", { latency: 10, handler: () => "a" });
    h.warm("a", 10);
    const run = async (n: number): Promise<void> => {
      for (let i = 0; i < n; i++) {
        await h.clock.runUntilSettled(
          h.coordinator.fanOut(task, { peers: ["a"], budgetMs: 200, model: collectModel() }),
        );
      }
    };
    const count = (m: Map<string, MetricData>): number | undefined =>
      valueOf(m.get(METRIC.decisions), { [ATTR.mode]: "speculate" });
    await run(150); // two batches of 64, and 22 queued
    let m = await h.collect();
    expect(count(m)).toBe(150);
    const duration = points(m.get(METRIC.duration)).find((p) => p.attributes[ATTR.mode] === "speculate")!;
    expect((duration.value as unknown as Histogram).count).toBe(150);
    expect(valueOf(m.get(METRIC.commitRatio), {})).toBe(1);
    await run(3);
    h.metrics.close(); // counts the 3 queued before the callbacks stop
    m = await h.collect();
    const budget = points(m.get(METRIC.budget)).find((p) => p.attributes[ATTR.mode] === "speculate")!;
    expect((budget.value as unknown as Histogram).count).toBe(153);
  });

  it("reads per-peer p50, p99, samples and estimate age from the estimator when collected", async () => {
    const h = setup();
    h.warm("a", 10, 50);
    h.warm("b", 40, 10); // too few samples: unknown
    await h.clock.advance(250);
    const m = await h.collect();
    const p99 = m.get(PEER_METRIC.p99)!;
    expect(p99.descriptor.unit).toBe("s");
    expect(valueOf(p99, { [ATTR.peer]: "a" })).toBeGreaterThanOrEqual(0.0095);
    expect(valueOf(p99, { [ATTR.peer]: "a" })).toBeLessThanOrEqual(0.0105);
    expect(valueOf(m.get(PEER_METRIC.samples), { [ATTR.peer]: "a" })).toBe(50);
    expect(valueOf(m.get(PEER_METRIC.samples), { [ATTR.peer]: "b" })).toBe(10);
    expect(valueOf(m.get(PEER_METRIC.age), { [ATTR.peer]: "a" })).toBe(0.25);
    expect(valueOf(m.get(PEER_METRIC.fresh), { [ATTR.peer]: "a" })).toBe(1);
    expect(valueOf(m.get(PEER_METRIC.fresh), { [ATTR.peer]: "b" })).toBe(0);
  });

  it("stops observing after close()", async () => {
    const h = setup();
    h.warm("a", 10, 50);
    h.metrics.close();
    const m = await h.collect();
    expect(points(m.get(PEER_METRIC.p99))).toHaveLength(0);
  });
});
