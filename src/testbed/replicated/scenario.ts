/**
 * The `replicated-tail` scenario (testbed/scenarios/replicated-tail.yaml, `runner: replicated`): r
 * replicas of one task with a heavy-tailed, now and then stalled latency, one seeded request stream at
 * several caller budgets, every request sent under each hedge policy. Every bad field is an
 * INVALID_CONFIG naming it, its value, the file and what was expected.
 */
import { invalid } from "../../errors.js";
import { HEDGE_DEFAULTS, HEDGE_RANGES } from "../../hedge/options.js";
import type { HedgeOptions } from "../../hedge/options.js";
import { HEDGE_POLICY_NAMES } from "../../hedge/types.js";
import type { HedgePolicyName } from "../../hedge/types.js";
import { LATENCY_MODEL_RANGES } from "../../peers/latency-model.js";
import type { LatencyModelOptions } from "../../peers/latency-model.js";
import { checkRange, intRange, numberAbove, numberRange } from "../../util/range.js";
import type { NumberRange } from "../../util/range.js";

export interface ReplicatedScenario {
  readonly name: string;
  readonly file: string;
  readonly seed: number;
  readonly warmupS: number;
  readonly durationS: number;
  /** r: replicas of the task, each a node. */
  readonly replicas: number;
  /** Answers required (1 <= k < r). */
  readonly k: number;
  /** Each replica's model: body and tail as given, its own stall group; seeds differ per replica. */
  readonly latency: Required<Pick<LatencyModelOptions, "body" | "tail">> & {
    readonly stall: { readonly episodesPerSecond: number; readonly durationMs: { min: number; max: number } };
  };
  readonly budgetsMs: readonly number[];
  /** Requests per second at each budget (Poisson). */
  readonly ratePerS: number;
  readonly policies: readonly HedgePolicyName[];
  readonly hedge: Readonly<HedgeOptions>;
  readonly staggerMs: number;
}

type Raw = Record<string, unknown>;

export function replicatedScenarioFrom(raw: unknown, file: string): ReplicatedScenario {
  const source = `file ${file}`;
  const bad = (field: string, got: unknown, expected: string): never => {
    throw invalid(field, got, expected, { source, code: "INVALID_CONFIG" });
  };
  const obj = (v: unknown, field: string): Raw =>
    typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Raw) : bad(field, v, "a mapping");
  const num = (o: Raw, key: string, field: string, r: NumberRange, dflt?: number): number =>
    o[key] === undefined && dflt !== undefined
      ? dflt
      : checkRange(field, o[key], r, { source, code: "INVALID_CONFIG" });
  const s = obj(raw, "(scenario)");
  const known = [
    "name",
    "runner",
    "seed",
    "warmupS",
    "durationS",
    "replicas",
    "k",
    "latency",
    "budgetsMs",
    "ratePerS",
    "policies",
    "hedge",
    "staggerMs",
  ];
  for (const key of Object.keys(s)) if (!known.includes(key)) bad(key, s[key], "a known key");
  const name = typeof s.name === "string" && s.name !== "" ? s.name : bad("name", s.name, "a name");
  const replicas = num(s, "replicas", "replicas", intRange(2, 16));
  const k = num(s, "k", "k", intRange(1, replicas - 1));
  const lat = obj(s.latency, "latency");
  const R = LATENCY_MODEL_RANGES;
  const body = obj(lat.body, "latency.body");
  const tail = obj(lat.tail, "latency.tail");
  const stall = obj(lat.stall, "latency.stall");
  const stallMs = obj(stall.durationMs, "latency.stall.durationMs");
  const minMs = num(stallMs, "min", "latency.stall.durationMs.min", R.gateway.durationMs);
  const budgets = Array.isArray(s.budgetsMs) ? (s.budgetsMs as unknown[]) : [];
  if (budgets.length === 0) bad("budgetsMs", s.budgetsMs, "a list of at least one budget in ms");
  const policies = Array.isArray(s.policies) ? (s.policies as unknown[]) : [];
  if (policies.length < 2) bad("policies", s.policies, "a list of at least two hedge policies");
  const h = s.hedge === undefined ? {} : obj(s.hedge, "hedge");
  const hedge = Object.fromEntries(
    (Object.keys(HEDGE_DEFAULTS) as (keyof HedgeOptions)[]).map((key) => [
      key,
      num(h, key, `hedge.${key}`, HEDGE_RANGES[key], HEDGE_DEFAULTS[key]),
    ]),
  ) as unknown as HedgeOptions;
  return {
    name,
    file,
    seed: num(s, "seed", "seed", intRange(0, 2 ** 31), 1),
    warmupS: num(s, "warmupS", "warmupS", numberRange(0, 3600), 10),
    durationS: num(s, "durationS", "durationS", numberAbove(0, 86_400)),
    replicas,
    k,
    latency: {
      body: {
        medianMs: num(body, "medianMs", "latency.body.medianMs", R.body.medianMs),
        sigma: num(body, "sigma", "latency.body.sigma", R.body.sigma),
      },
      tail: {
        probability: num(tail, "probability", "latency.tail.probability", R.tail.probability),
        scaleMs: num(tail, "scaleMs", "latency.tail.scaleMs", R.tail.scaleMs),
        shape: num(tail, "shape", "latency.tail.shape", R.tail.shape),
      },
      stall: {
        episodesPerSecond: num(
          stall,
          "episodesPerSecond",
          "latency.stall.episodesPerSecond",
          R.gateway.episodesPerSecond,
        ),
        durationMs: {
          min: minMs,
          max: num(stallMs, "max", "latency.stall.durationMs.max", numberRange(minMs)),
        },
      },
    },
    budgetsMs: budgets.map((b, i) => checkRange(`budgetsMs[${i}]`, b, numberAbove(0, 60_000), { source })),
    ratePerS: num(s, "ratePerS", "ratePerS", numberAbove(0, 200)),
    policies: policies.map((p, i) =>
      (HEDGE_POLICY_NAMES as readonly unknown[]).includes(p)
        ? (p as HedgePolicyName)
        : bad(`policies[${i}]`, p, `one of ${HEDGE_POLICY_NAMES.join(", ")}`),
    ),
    hedge,
    staggerMs: num(s, "staggerMs", "staggerMs", numberRange(0, 1000), 4),
  };
}
