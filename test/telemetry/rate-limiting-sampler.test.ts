import { ROOT_CONTEXT, SpanKind, trace, TraceFlags } from "@opentelemetry/api";
import { ParentBasedSampler, SamplingDecision } from "@opentelemetry/sdk-trace";
import { describe, expect, it } from "vitest";
import { RateLimitingSampler } from "../../src/telemetry/sdk/rate-limiting-sampler.js";

const TRACE = "0af7651916cd43dd8448eb211c80319c";

function sample(s: { shouldSample: ParentBasedSampler["shouldSample"] }, ctx = ROOT_CONTEXT): boolean {
  return (
    s.shouldSample(ctx, TRACE, "tailswarm.fanout", SpanKind.INTERNAL, {}, []).decision ===
    SamplingDecision.RECORD_AND_SAMPLED
  );
}

function clock(): { now: () => number; advance: (ms: number) => void } {
  let t = 1_000;
  return { now: () => t, advance: (ms) => (t += ms) };
}

describe("RateLimitingSampler", () => {
  it("samples every trace below its rate", () => {
    const c = clock();
    const s = new RateLimitingSampler(10, c.now);
    for (let i = 0; i < 50; i++) {
      expect(sample(s)).toBe(true);
      c.advance(150); // 6.7 traces/s
    }
  });

  it("declines() asks without taking the token, and counts a decline as a trace not started", () => {
    const c = clock();
    const s = new RateLimitingSampler(2, c.now);
    expect(s.declines()).toBe(false);
    expect(s.declines()).toBe(false); // nothing taken
    expect(sample(s)).toBe(true);
    expect(sample(s)).toBe(true);
    expect(s.declines()).toBe(true);
    expect(s.counts).toEqual({ sampled: 2, dropped: 1 });
    c.advance(500); // one token back
    expect(s.declines()).toBe(false);
    expect(sample(s)).toBe(true);
    expect(s.counts).toEqual({ sampled: 3, dropped: 1 });
  });

  it("samples a burst up to one second's worth, then refills at the rate", () => {
    const c = clock();
    const s = new RateLimitingSampler(10, c.now);
    const burst = Array.from({ length: 25 }, () => sample(s)).filter(Boolean).length;
    expect(burst).toBe(10);
    c.advance(500);
    expect(Array.from({ length: 25 }, () => sample(s)).filter(Boolean).length).toBe(5);
    // A long quiet spell refills to one second's worth, not more.
    c.advance(60_000);
    expect(Array.from({ length: 25 }, () => sample(s)).filter(Boolean).length).toBe(10);
  });

  it("holds the long-run rate under steady overload", () => {
    const c = clock();
    const s = new RateLimitingSampler(10, c.now);
    let sampled = 0;
    for (let i = 0; i < 10_000; i++) {
      if (sample(s)) sampled++;
      c.advance(1); // 1000 fan-outs/s for 10 s
    }
    expect(sampled).toBeGreaterThanOrEqual(100);
    expect(sampled).toBeLessThanOrEqual(111); // 10 s × 10/s plus the first second's burst
  });

  it("keeps a rate below one per second: one trace, then one every 1/rate seconds", () => {
    const c = clock();
    const s = new RateLimitingSampler(0.5, c.now);
    expect(sample(s)).toBe(true);
    expect(sample(s)).toBe(false);
    c.advance(1_999);
    expect(sample(s)).toBe(false);
    c.advance(1);
    expect(sample(s)).toBe(true);
  });

  it("samples nothing at 0", () => {
    const s = new RateLimitingSampler(0);
    expect(sample(s)).toBe(false);
  });

  it("refuses a negative or non-finite rate, naming the value", () => {
    for (const bad of [-1, NaN, Infinity]) {
      expect(() => new RateLimitingSampler(bad)).toThrow(
        expect.objectContaining({ code: "INVALID_CONFIG", message: expect.stringContaining(String(bad)) }),
      );
    }
  });

  it("under ParentBasedSampler, a child of a sampled caller is sampled with the bucket empty", () => {
    const c = clock();
    const s = new ParentBasedSampler({ root: new RateLimitingSampler(1, c.now) });
    expect(sample(s)).toBe(true);
    expect(sample(s)).toBe(false); // the bucket is empty for new traces
    const sampledParent = trace.setSpanContext(ROOT_CONTEXT, {
      traceId: TRACE,
      spanId: "b7ad6b7169203331",
      traceFlags: TraceFlags.SAMPLED,
      isRemote: true,
    });
    expect(sample(s, sampledParent)).toBe(true);
    const unsampledParent = trace.setSpanContext(ROOT_CONTEXT, {
      traceId: TRACE,
      spanId: "b7ad6b7169203331",
      traceFlags: TraceFlags.NONE,
      isRemote: true,
    });
    c.advance(5_000);
    expect(sample(s, unsampledParent)).toBe(false);
    expect(String(s)).toContain("RateLimitingSampler{1/s}");
  });
});
