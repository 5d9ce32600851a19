import { context, propagation, ROOT_CONTEXT, trace } from "@opentelemetry/api";
import type { Span } from "@opentelemetry/api";
import {
  AlwaysOffSampler,
  TracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace";
import type { ReadableSpan } from "@opentelemetry/sdk-trace";
import { beforeEach, describe, expect, it } from "vitest";
import type { BranchCallOptions, BranchRequest, PeerTransport } from "../../src/engine/transport.js";
import { ATTR, SPAN_BRANCH, SPAN_FANOUT } from "../../src/telemetry/attributes.js";
import { FanoutTracer } from "../../src/telemetry/fanout-tracer.js";
import { instrumentTransport } from "../../src/telemetry/instrument-transport.js";
import { collectModel, rig, START, task, useAsyncContextAndW3C } from "./helpers.js";

const exporter = new InMemorySpanExporter();
const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
const tracer = provider.getTracer("test");

interface Sent {
  readonly span: Span | undefined;
  readonly traceparent: string;
  readonly active: Span | undefined;
}

useAsyncContextAndW3C();
beforeEach(() => exporter.reset());

/**
 * Remembers, for each branch sent, the span of the context it was sent in (`traceContext`), the
 * traceparent and the span active while the transport sent it.
 */
function spyTransport(seen: Map<string, Sent>) {
  return (inner: PeerTransport): PeerTransport => ({
    branch(peer: string, req: BranchRequest, opts: BranchCallOptions) {
      const carrier: Record<string, string> = {};
      const ctx = opts.traceContext ?? ROOT_CONTEXT;
      propagation.inject(ctx, carrier);
      seen.set(req.branchId, {
        span: trace.getSpan(ctx),
        traceparent: carrier["traceparent"] ?? "",
        active: trace.getActiveSpan(),
      });
      return inner.branch(peer, req, opts);
    },
  });
}

function setup(ft = new FanoutTracer({ tracer })) {
  const sent = new Map<string, Sent>();
  const r = rig(ft, (t) => instrumentTransport(spyTransport(sent)(t), { tracer: ft }));
  // the rig's clock is the engine's; the tracer computes deadline_in_ms on the system clock here
  return { ...r, ft, sent };
}

const byName = (name: string): ReadableSpan[] => exporter.getFinishedSpans().filter((s) => s.name === name);

describe("FanoutTracer", () => {
  it("records a fan-out span whose attributes explain the decision, and a child span per branch", async () => {
    const h = setup();
    for (const [peer, ms] of [
      ["a", 10],
      ["b", 15],
      ["c", 20],
    ] as const) {
      h.transport.addPeer(peer, { latency: ms, handler: () => peer });
      h.warm(peer, ms);
    }
    const outcome = await h.clock.runUntilSettled(
      h.coordinator.fanOut(task, { peers: ["a", "b", "c"], budgetMs: 200, model: collectModel() }),
    );
    await h.clock.flush();
    expect(outcome.classification.mode).toBe("speculate");

    const [fan] = byName(SPAN_FANOUT);
    expect(fan).toBeDefined();
    const a = fan!.attributes;
    expect(a[ATTR.fanoutId]).toBe(outcome.fanoutId);
    expect(a[ATTR.mode]).toBe("speculate");
    expect(a[ATTR.reason]).toBe("budget-exceeds-p99-plus-abandon-cost");
    expect(a[ATTR.budgetMs]).toBe(200);
    expect(a[ATTR.fanoutP50Ms]).toBe(outcome.classification.fanoutP50Ms);
    expect(a[ATTR.fanoutP99Ms]).toBe(outcome.classification.fanoutP99Ms);
    expect(a[ATTR.fanoutP99Ms]).toBeGreaterThanOrEqual(20);
    expect(a[ATTR.abandonCostMs]).toBe(0);
    expect(a[ATTR.canFlip]).toBe(true);
    expect(a[ATTR.fanoutSize]).toBe(3);
    expect(a[ATTR.requirement]).toBe("all");
    expect(a[ATTR.estimateStatus]).toBe("fresh");
    expect(a[ATTR.estimateMinSamples]).toBe(100);
    expect(a[ATTR.estimateAgeMs]).toBe(0);
    expect(a[ATTR.taskKind]).toBe("echo");
    expect(a[ATTR.answered]).toBe(3);
    expect(a[ATTR.branchesCommitted]).toBe(3);
    expect(a[ATTR.decisionRelevant]).toBe(true);
    expect(a[ATTR.deadlineMissed]).toBe(false);

    const branches = byName(SPAN_BRANCH);
    expect(branches).toHaveLength(3);
    for (const b of branches) {
      expect(b.parentSpanContext?.spanId).toBe(fan!.spanContext().spanId);
      expect(b.spanContext().traceId).toBe(fan!.spanContext().traceId);
      expect(b.attributes[ATTR.branchOutcome]).toBe("committed");
      expect(b.attributes[ATTR.branchDeadline]).toBe(START + 200);
      expect(b.attributes[ATTR.branchPivotal]).toBe(true);
      // the transport was given the branch span's context, without it being entered
      const sent = h.sent.get(b.attributes[ATTR.branchId] as string)!;
      expect(sent.span?.spanContext().spanId).toBe(b.spanContext().spanId);
      expect(sent.traceparent).toContain(b.spanContext().spanId);
      expect(sent.active).toBeUndefined();
    }
    expect(
      byName(SPAN_BRANCH)
        .map((b) => b.attributes[ATTR.peer])
        .sort(),
    ).toEqual(["a", "b", "c"]);
    expect(h.ft.open).toEqual({ fanouts: 0, branches: 0 });
  });

  it("marks abandoned branches with the work the peer lost", async () => {
    const h = setup();
    for (const p of ["a", "b", "c"]) h.warm(p, 10);
    h.transport.addPeer("a", { latency: 10, handler: () => "a" });
    h.transport.addPeer("b", { latency: 12, handler: () => "b" });
    h.transport.addPeer("c", { latency: 500, handler: () => "c" });
    const outcome = await h.clock.runUntilSettled(
      h.coordinator.fanOut(task, { peers: ["a", "b", "c"], budgetMs: 100, model: collectModel() }),
    );
    await h.clock.runUntilIdle();
    const c = byName(SPAN_BRANCH).find((s) => s.attributes[ATTR.peer] === "c")!;
    expect(c.attributes[ATTR.branchOutcome]).toBe("abandoned");
    expect(c.attributes[ATTR.branchLostWorkMs]).toBe(100);
    const fan = byName(SPAN_FANOUT)[0]!;
    expect(fan.attributes[ATTR.branchesAbandoned]).toBe(1);
    expect(fan.attributes[ATTR.lostWorkMs]).toBe(outcome.abandonCostMs);
    expect(h.ft.open).toEqual({ fanouts: 0, branches: 0 });
  });

  it("records degrade without branch spans, under the caller's active span", async () => {
    const h = setup();
    h.transport.addPeer("a", { latency: 50, handler: () => "a" });
    h.warm("a", 50);
    const parent = tracer.startSpan("caller");
    const outcome = await context.with(trace.setSpan(context.active(), parent), () =>
      h.clock.runUntilSettled(
        h.coordinator.fanOut(task, {
          peers: ["a"],
          budgetMs: 20,
          model: collectModel(),
          fallback: () => "local",
        }),
      ),
    );
    parent.end();
    expect(outcome.classification.mode).toBe("degrade");
    const fan = byName(SPAN_FANOUT)[0]!;
    expect(fan.attributes[ATTR.mode]).toBe("degrade");
    expect(fan.attributes[ATTR.reason]).toBe("budget-at-or-below-p50");
    expect(fan.attributes[ATTR.degraded]).toBe(true);
    expect(fan.parentSpanContext?.spanId).toBe(parent.spanContext().spanId);
    expect(byName(SPAN_BRANCH)).toHaveLength(0);
  });

  it("ends the span as an error when a SpeculationBudgetViolation is thrown to the caller", async () => {
    const h = setup();
    h.transport.addPeer("a", { latency: 50, handler: () => "a" });
    h.warm("a", 50);
    await expect(
      h.clock.runUntilSettled(
        h.coordinator.fanOut(task, { peers: ["a"], budgetMs: 20, model: collectModel() }),
      ),
    ).rejects.toMatchObject({ code: "SPECULATION_BUDGET_VIOLATION" });
    await Promise.resolve();
    const fan = byName(SPAN_FANOUT)[0]!;
    expect(fan.status.code).toBe(2); // ERROR
    expect(fan.attributes[ATTR.violationCode]).toBe("SPECULATION_BUDGET_VIOLATION");
    expect(fan.events.map((e) => e.name)).toContain("tailswarm.violation");
    expect(h.ft.open).toEqual({ fanouts: 0, branches: 0 });
  });

  it("a violation turned into degrade is an event on the degrade span", async () => {
    const h = setup();
    h.transport.addPeer("a", { latency: 5, handler: () => "a" });
    h.warm("a", 5);
    const outcome = await h.clock.runUntilSettled(
      h.coordinator.fanOut(task, {
        peers: ["a"],
        budgetMs: -1,
        model: collectModel(),
        fallback: () => "local",
      }),
    );
    await Promise.resolve();
    expect(outcome.violation?.code).toBe("SPECULATION_BUDGET_VIOLATION");
    const spans = byName(SPAN_FANOUT);
    expect(spans).toHaveLength(1);
    expect(spans[0]!.attributes[ATTR.degraded]).toBe(true);
    // budget -1: the deadline had passed already, which is what the span's status says
    expect(spans[0]!.status.message).toBe("decision came after the deadline");
    expect(spans[0]!.attributes[ATTR.violationCode]).toBe("SPECULATION_BUDGET_VIOLATION");
    expect(spans[0]!.events.filter((e) => e.name === "tailswarm.violation")).toHaveLength(1);
  });

  it("records nothing and keeps nothing open when the sampler drops the trace", async () => {
    const off = new TracerProvider({
      sampler: new AlwaysOffSampler(),
      spanProcessors: [new SimpleSpanProcessor({ exporter })],
    });
    const h = setup(new FanoutTracer({ tracer: off.getTracer("off") }));
    for (const p of ["a", "b"]) {
      h.transport.addPeer(p, { latency: 10, handler: () => p });
      h.warm(p, 10);
    }
    await h.clock.runUntilSettled(
      h.coordinator.fanOut(task, { peers: ["a", "b"], budgetMs: 200, model: collectModel() }),
    );
    expect(exporter.getFinishedSpans()).toHaveLength(0);
    expect(h.ft.open).toEqual({ fanouts: 0, branches: 0 });
    // No span object per branch: both go out in the fan-out's context, flagged "not sampled".
    const sent = [...h.sent.values()];
    expect(sent).toHaveLength(2);
    expect(sent[0]!.span).toBe(sent[1]!.span);
    expect(sent[0]!.traceparent).toMatch(/-00$/);
  });
});
