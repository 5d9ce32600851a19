import { describe, expect, it } from "vitest";
import { samplerFromEnv } from "../../src/telemetry/sdk/sampler-from-env.js";

describe("samplerFromEnv", () => {
  it("defaults to parent-based over a rate limit of new traces", () => {
    expect(samplerFromEnv({}).sampler.toString()).toMatch(/^ParentBased\{root=RateLimitingSampler\{10\/s\}/);
    expect(samplerFromEnv({ OTEL_TRACES_SAMPLER: " " }, 2.5).sampler.toString()).toContain(
      "RateLimitingSampler{2.5/s}",
    );
  });

  it("builds the specification's samplers from OTEL_TRACES_SAMPLER and _ARG", () => {
    expect(samplerFromEnv({ OTEL_TRACES_SAMPLER: "always_on" }).sampler.toString()).toBe("AlwaysOnSampler");
    expect(samplerFromEnv({ OTEL_TRACES_SAMPLER: "always_off" }).sampler.toString()).toBe("AlwaysOffSampler");
    expect(samplerFromEnv({ OTEL_TRACES_SAMPLER: "parentbased_always_on" }).sampler.toString()).toMatch(
      /^ParentBased\{root=AlwaysOnSampler/,
    );
    expect(samplerFromEnv({ OTEL_TRACES_SAMPLER: "parentbased_always_off" }).sampler.toString()).toMatch(
      /^ParentBased\{root=AlwaysOffSampler/,
    );
    expect(
      samplerFromEnv({
        OTEL_TRACES_SAMPLER: "traceidratio",
        OTEL_TRACES_SAMPLER_ARG: "0.25",
      }).sampler.toString(),
    ).toBe("TraceIdRatioBased{0.25}");
    expect(
      samplerFromEnv({
        OTEL_TRACES_SAMPLER: "PARENTBASED_TRACEIDRATIO",
        OTEL_TRACES_SAMPLER_ARG: "0.1",
      }).sampler.toString(),
    ).toMatch(/^ParentBased\{root=TraceIdRatioBased\{0.1\}/);
    expect(samplerFromEnv({ OTEL_TRACES_SAMPLER: "traceidratio" }).sampler.toString()).toBe(
      "TraceIdRatioBased{1}",
    );
  });

  it("names a misspelt sampler and a bad ratio instead of tracing everything", () => {
    expect(() => samplerFromEnv({ OTEL_TRACES_SAMPLER: "parentbased_alwayson" })).toThrow(
      expect.objectContaining({
        code: "INVALID_CONFIG",
        message: expect.stringMatching(
          /OTEL_TRACES_SAMPLER: got "parentbased_alwayson", expected one of always_on/,
        ),
      }),
    );
    expect(() =>
      samplerFromEnv({ OTEL_TRACES_SAMPLER: "traceidratio", OTEL_TRACES_SAMPLER_ARG: "1.5" }),
    ).toThrow(/OTEL_TRACES_SAMPLER_ARG: got "1.5", expected a ratio, a number >= 0 <= 1/);
    expect(() => samplerFromEnv({}, -3)).toThrow(
      /telemetry\.tracesPerSecond: got -3, expected a number >= 0/,
    );
  });
});
