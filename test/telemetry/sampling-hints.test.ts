import { context, propagation, ROOT_CONTEXT, trace, TraceFlags } from "@opentelemetry/api";
import { AlwaysOnSampler } from "@opentelemetry/sdk-trace";
import { describe, expect, it } from "vitest";
import type {
  BranchCallOptions,
  BranchRequest,
  BranchResult,
  PeerTransport,
} from "../../src/engine/transport.js";
import { SPAN_BRANCH, SPAN_FANOUT } from "../../src/telemetry/attributes.js";
import { FanoutTracer } from "../../src/telemetry/fanout-tracer.js";
import { instrumentTransport } from "../../src/telemetry/instrument-transport.js";
import type { SamplingHints } from "../../src/telemetry/sampling-hints.js";
import { samplerFromEnv } from "../../src/telemetry/sdk/sampler-from-env.js";
import { collectModel, countingSdk, rig, task, useAsyncContextAndW3C } from "./helpers.js";

useAsyncContextAndW3C();

/** Runs one fan-out to peers a and b through the tracer; returns the traceparent each branch carried. */
async function fanOut(ft: FanoutTracer, parent = context.active()): Promise<string[]> {
  const sent: string[] = [];
  const spy = (inner: PeerTransport): PeerTransport => ({
    branch(peer: string, req: BranchRequest, opts: BranchCallOptions) {
      const carrier: Record<string, string> = {};
      propagation.inject(opts.traceContext ?? ROOT_CONTEXT, carrier);
      sent.push(carrier["traceparent"] ?? "");
      return inner.branch(peer, req, opts);
    },
  });
  const h = rig(ft, (t) => instrumentTransport(spy(t), { tracer: ft }));
  for (const p of ["a", "b"]) {
    h.transport.addPeer(p, { latency: 10, handler: () => p });
    h.warm(p, 10);
  }
  await context.with(parent, () =>
    h.clock.runUntilSettled(
      h.coordinator.fanOut(task, { peers: ["a", "b"], budgetMs: 500, model: collectModel() }),
    ),
  );
  expect(ft.open).toEqual({ fanouts: 0, branches: 0 });
  return sent;
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-(0[01])$/;

describe("FanoutTracer with sampling hints", () => {
  it("starts no span for a root fan-out the sampler declines, and still sends an unsampled traceparent", async () => {
    const s = countingSdk(new AlwaysOnSampler()); // would sample: proves the tracer never asked it
    const hints: SamplingHints = { parentBased: true, declinesRoot: () => true };
    const ft = new FanoutTracer({ tracer: s.tracer, sampling: hints });
    const first = await fanOut(ft);
    const second = await fanOut(ft);
    expect(s.started()).toBe(0);
    expect(s.exporter.getFinishedSpans()).toHaveLength(0);
    for (const sent of [first, second]) {
      expect(sent).toHaveLength(2);
      expect(new Set(sent).size).toBe(1); // one trace per fan-out, flag off
      const m = TRACEPARENT.exec(sent[0]!)!;
      expect(m[3]).toBe("00");
      expect(m[1]).not.toMatch(/^0+$/);
    }
    expect(TRACEPARENT.exec(first[0]!)![1]).not.toBe(TRACEPARENT.exec(second[0]!)![1]);
  });

  it("starts and records the span when the rate limiter has a token, counting it once", async () => {
    const env = samplerFromEnv({}, 1); // one token: the first fan-out is traced, the next one is not
    const s = countingSdk(env.sampler);
    const ft = new FanoutTracer({ tracer: s.tracer, sampling: env.hints });
    const traced = await fanOut(ft);
    expect(env.limiter!.counts).toEqual({ sampled: 1, dropped: 0 });
    expect(s.exporter.getFinishedSpans().filter((x) => x.name === SPAN_FANOUT)).toHaveLength(1);
    expect(s.exporter.getFinishedSpans().filter((x) => x.name === SPAN_BRANCH)).toHaveLength(2);
    expect(TRACEPARENT.exec(traced[0]!)![3]).toBe("01");

    const started = s.started();
    const untraced = await fanOut(ft);
    expect(env.limiter!.counts).toEqual({ sampled: 1, dropped: 1 });
    expect(s.started()).toBe(started); // the declined fan-out never reached the SDK
    expect(TRACEPARENT.exec(untraced[0]!)![3]).toBe("00");
    expect(s.exporter.getFinishedSpans()).toHaveLength(3);
  });

  it("sends a fan-out under an unsampled parent in the parent's trace, unsampled, with no span of its own", async () => {
    const s = countingSdk(new AlwaysOnSampler());
    const ft = new FanoutTracer({ tracer: s.tracer, sampling: { parentBased: true } });
    const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
    const parent = trace.setSpanContext(ROOT_CONTEXT, {
      traceId,
      spanId: "00f067aa0ba902b7",
      traceFlags: TraceFlags.NONE,
      isRemote: true,
    });
    const sent = await fanOut(ft, parent);
    expect(s.started()).toBe(0);
    expect(sent).toEqual([`00-${traceId}-00f067aa0ba902b7-00`, `00-${traceId}-00f067aa0ba902b7-00`]);
  });

  it("asks the sampler about an unsampled parent's fan-out when the sampler is not parent-based", async () => {
    const s = countingSdk(new AlwaysOnSampler()); // always_on ignores the parent's flag
    const ft = new FanoutTracer({ tracer: s.tracer, sampling: { parentBased: false } });
    const parent = trace.setSpanContext(ROOT_CONTEXT, {
      traceId: "4bf92f3577b34da6a3ce929d0e0e4736",
      spanId: "00f067aa0ba902b7",
      traceFlags: TraceFlags.NONE,
      isRemote: true,
    });
    const sent = await fanOut(ft, parent);
    expect(s.exporter.getFinishedSpans().filter((x) => x.name === SPAN_FANOUT)).toHaveLength(1);
    expect(TRACEPARENT.exec(sent[0]!)![3]).toBe("01");
  });

  it("keeps nothing per branch for an unsampled fan-out, and records nothing when its late branch reports", async () => {
    const s = countingSdk(new AlwaysOnSampler());
    const ft = new FanoutTracer({
      tracer: s.tracer,
      sampling: { parentBased: true, declinesRoot: () => true },
    });
    // c's transport call settles only when the test says so, after the fan-out has decided without it
    let settleC: (r: BranchResult) => void = () => undefined;
    const late = (inner: PeerTransport): PeerTransport => ({
      branch: (peer, req, opts) =>
        peer === "c" ? new Promise<BranchResult>((r) => (settleC = r)) : inner.branch(peer, req, opts),
    });
    const h = rig(ft, (t) => instrumentTransport(late(t), { tracer: ft }));
    for (const p of ["a", "b", "c"]) h.warm(p, 10);
    h.transport.addPeer("a", { latency: 10, handler: () => "a" });
    h.transport.addPeer("b", { latency: 12, handler: () => "b" });
    const outcome = await h.clock.runUntilSettled(
      h.coordinator.fanOut(task, { peers: ["a", "b", "c"], budgetMs: 100, model: collectModel() }),
    );
    expect(outcome.branches.find((b) => b.peer === "c")?.outcome).toBe("abandoned");
    expect(ft.open).toEqual({ fanouts: 0, branches: 0 }); // ended, c still to report: nothing kept
    settleC({ kind: "abandoned", lostWorkMs: 40 });
    await h.clock.runUntilIdle();
    expect(ft.open).toEqual({ fanouts: 0, branches: 0 });
    expect(s.started()).toBe(0); // no span after the fact either
    expect(s.exporter.getFinishedSpans()).toHaveLength(0);
  });

  it("samplerFromEnv says which samplers are parent-based, and which decline roots", () => {
    expect(samplerFromEnv({}).hints.parentBased).toBe(true);
    expect(samplerFromEnv({}).hints.declinesRoot).toBeTypeOf("function");
    for (const name of ["parentbased_always_on", "parentbased_traceidratio"]) {
      expect(samplerFromEnv({ OTEL_TRACES_SAMPLER: name }).hints).toEqual({ parentBased: true });
    }
    for (const name of ["always_on", "traceidratio"]) {
      expect(samplerFromEnv({ OTEL_TRACES_SAMPLER: name }).hints).toEqual({ parentBased: false });
    }
    // The always_off ones never start a trace (the rate limiter's declines() counts; these need not).
    const off = samplerFromEnv({ OTEL_TRACES_SAMPLER: "parentbased_always_off" }).hints;
    expect(off.parentBased).toBe(true);
    expect(off.declinesRoot?.()).toBe(true);
    const alwaysOff = samplerFromEnv({ OTEL_TRACES_SAMPLER: "always_off" }).hints;
    expect(alwaysOff.parentBased).toBe(false);
    expect(alwaysOff.declinesRoot?.()).toBe(true);
  });
});
