/**
 * The trace sampler of a node: OTEL_TRACES_SAMPLER / OTEL_TRACES_SAMPLER_ARG when set (the values the
 * OpenTelemetry specification defines), else tailswarm's default — parent-based over a
 * RateLimitingSampler. Built here rather than left to the tracer provider so that a misspelt sampler is
 * an error that names it (the SDK would log a warning and trace everything) and so that the `env`
 * given to startTelemetry is the one read.
 */
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
} from "@opentelemetry/sdk-trace";
import type { Sampler } from "@opentelemetry/sdk-trace";
import { invalid } from "../../errors.js";
import type { SamplingHints } from "../sampling-hints.js";
import { RateLimitingSampler } from "./rate-limiting-sampler.js";
import { inRange, numberRange } from "../../util/range.js";
import { DEFAULT_TRACES_PER_SECOND } from "../sampler-defaults.js";

type Env = Readonly<Record<string, string | undefined>>;

const NAMES = [
  "always_on",
  "always_off",
  "traceidratio",
  "parentbased_always_on",
  "parentbased_always_off",
  "parentbased_traceidratio",
] as const;

function ratio(env: Env): number {
  const raw = (env["OTEL_TRACES_SAMPLER_ARG"] ?? "").trim();
  if (raw === "") return 1;
  const r = Number(raw);
  if (!inRange(r, numberRange(0, 1))) {
    throw invalid("OTEL_TRACES_SAMPLER_ARG", raw, "a ratio, a number >= 0 <= 1", { code: "INVALID_CONFIG" });
  }
  return r;
}

export interface EnvSampler {
  readonly sampler: Sampler;
  /** The default sampler's rate limiter (its counts become a metric); undefined when the env named one. */
  readonly limiter: RateLimitingSampler | undefined;
  /** What the fan-out tracer may know of this sampler to skip spans it would not sample. */
  readonly hints: SamplingHints;
}

/**
 * @example
 * samplerFromEnv(process.env, 10).sampler.toString();
 * // "ParentBased{root=RateLimitingSampler{10/s}, …}" unless OTEL_TRACES_SAMPLER says otherwise
 */
export function samplerFromEnv(env: Env, tracesPerSecond = DEFAULT_TRACES_PER_SECOND): EnvSampler {
  const name = (env["OTEL_TRACES_SAMPLER"] ?? "").trim().toLowerCase();
  if (name === "") {
    const limiter = new RateLimitingSampler(tracesPerSecond);
    return {
      sampler: new ParentBasedSampler({ root: limiter }),
      limiter,
      hints: { parentBased: true, declinesRoot: () => limiter.declines() },
    };
  }
  return {
    sampler: named(name, env, tracesPerSecond),
    limiter: undefined,
    // The parentbased_* samplers keep the default delegates: a child of an unsampled span is not sampled.
    // The always_off ones never start a trace.
    hints: {
      parentBased: name.startsWith("parentbased_"),
      ...(name.endsWith("always_off") && { declinesRoot: () => true }),
    },
  };
}

function named(name: string, env: Env, tracesPerSecond: number): Sampler {
  switch (name as (typeof NAMES)[number]) {
    case "always_on":
      return new AlwaysOnSampler();
    case "always_off":
      return new AlwaysOffSampler();
    case "traceidratio":
      return new TraceIdRatioBasedSampler(ratio(env));
    case "parentbased_always_on":
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
    case "parentbased_always_off":
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case "parentbased_traceidratio":
      return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(ratio(env)) });
    default:
      throw invalid(
        "OTEL_TRACES_SAMPLER",
        name,
        `one of ${NAMES.join(", ")} (unset: at most ${tracesPerSecond} new traces/s, parent-based)`,
        { code: "INVALID_CONFIG" },
      );
  }
}
