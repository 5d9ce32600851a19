/**
 * A testbed scenario, one schema: shapes, ranges, defaults and the checks across fields (gateway
 * peers within their region, unique names, a prior among the options). The loader validates against
 * it, the types are inferred from it (scenario-types.ts), and schema/scenario.schema.json is its JSON
 * Schema. The `node` section is the node config schema's own keys (those a scenario may set).
 */
import { z } from "zod";
import { group, oneOfField, rangeField, textField } from "../node/config/fields.js";
import { nodeConfigSchema } from "../node/config/schema.js";
import { LATENCY_MODEL_DEFAULTS, LATENCY_MODEL_RANGES } from "../peers/latency-model.js";
import { POLICY_NAMES } from "../policy/types.js";
import type { PolicyName } from "../policy/types.js";
import { intRange, numberAbove, numberRange } from "../util/range.js";

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const nameText = "1-64 characters: letters, digits, . _ - (starting with a letter or digit)";
const name = () => textField(nameText, NAME);
const doc = (description: string) => ({ description });

/** A strict object whose wrong type (or absence, when required) reads as `expected`. */
function shape<S extends z.core.$ZodLooseShape>(s: S, expected: string) {
  return z.strictObject(s, { error: (iss) => (iss.code === "invalid_type" ? expected : undefined) });
}

function list<T extends z.ZodType>(item: T, min: number) {
  const expected = min > 0 ? `a list of at least ${min} item(s)` : "a list";
  return z.array(item, { error: expected }).min(min, { error: expected });
}

const R = LATENCY_MODEL_RANGES;
const D = LATENCY_MODEL_DEFAULTS;

const region = shape(
  {
    name: name(),
    peers: rangeField(intRange(1, 500)).meta(doc("Peers in the region (gateway peers included).")),
    latency: shape(
      {
        body: shape(
          {
            medianMs: rangeField(R.body.medianMs).default(D.body.medianMs),
            sigma: rangeField(R.body.sigma).default(D.body.sigma),
          },
          "{ medianMs, sigma }",
        ),
        tail: shape(
          {
            probability: rangeField(R.tail.probability).default(D.tail.probability),
            scaleMs: rangeField(R.tail.scaleMs).default(D.tail.scaleMs),
            shape: rangeField(R.tail.shape).default(D.tail.shape),
          },
          "{ probability, scaleMs, shape }",
        ).optional(),
        medianSpread: rangeField(numberRange(0, 3))
          .default(0)
          .meta(
            doc(
              "Each peer's median is the region's times exp(spread · z), z a seeded standard normal; 0: identical.",
            ),
          ),
      },
      "{ body, tail?, medianSpread? }",
    ),
  },
  "an object { name, peers, latency }",
).transform((r) => ({
  name: r.name,
  peers: r.peers,
  body: r.latency.body,
  ...(r.latency.tail !== undefined && { tail: r.latency.tail }),
  medianSpread: r.latency.medianSpread,
}));

const episodeMs = rangeField(numberRange(0, 600_000));
const gateway = shape(
  {
    group: name().meta(doc("Peers of one group queue together (the latency model's gateway group).")),
    region: textField("one of the regions").meta(
      doc("Region whose first `peers` peers sit behind the gateway."),
    ),
    peers: rangeField(intRange(1, 500)),
    episodesPerSecond: rangeField(numberRange(0, 1000)),
    durationMs: shape({ min: episodeMs, max: episodeMs }, "{ min, max } in ms").superRefine((d, ctx) => {
      if (d.max < d.min)
        ctx.addIssue({
          code: "custom",
          message: `a number >= ${d.min} (min) <= 600000`,
          path: ["max"],
          input: d.max,
        });
    }),
  },
  "an object { group, region, peers, episodesPerSecond, durationMs }",
);

const coordinator = shape(
  {
    name: name(),
    budgetMs: rangeField(numberAbove(0, 60_000)).meta(
      doc("The caller's budget: sent as the gRPC deadline of every Coordinate call, ms."),
    ),
    ratePerS: rangeField(numberAbove(0, 200))
      .default(4)
      .meta(
        doc("Requests per second (Poisson arrivals, seeded). Each request is sent once under every policy."),
      ),
  },
  "an object { name, budgetMs, ratePerS? }",
);

const optionsText = "a list of at least 2 distinct non-empty strings";
const workload = shape(
  {
    options: z
      .array(z.string({ error: optionsText }).min(1, { error: optionsText }), { error: optionsText })
      .min(2, { error: optionsText })
      .refine((o) => new Set(o).size === o.length, { error: optionsText })
      .default(["hold", "act"]),
    prior: z
      .string()
      .optional()
      .meta(doc("The stale answer every peer outside a gateway gives (default: the first option).")),
    event: z
      .string()
      .optional()
      .meta(doc("The truth during a gateway episode (default: the first option other than the prior).")),
    gatewayWeight: z
      .union([z.literal("auto"), rangeField(numberAbove(0, 1e6))], {
        error: "auto or a number > 0 <= 1000000",
      })
      .default("auto")
      .meta(
        doc(
          "Weight of one gateway peer's vote; auto: the smallest integer that lets the gateway peers together outvote everyone else.",
        ),
      ),
  },
  "an object { options?, prior?, event?, gatewayWeight? }",
)
  .superRefine((w, ctx) => {
    const prior = w.prior ?? w.options[0]!;
    if (!w.options.includes(prior))
      ctx.addIssue({
        code: "custom",
        message: `one of ${w.options.join(", ")}`,
        path: ["prior"],
        input: prior,
      });
    const event = w.event ?? w.options.find((x) => x !== prior);
    if (event === undefined || !w.options.includes(event) || event === prior)
      ctx.addIssue({
        code: "custom",
        message: `one of ${w.options.join(", ")} other than the prior ${JSON.stringify(prior)}`,
        path: ["event"],
        input: event,
      });
  })
  .transform((w) => {
    const prior = w.prior ?? w.options[0]!;
    return {
      options: w.options as [string, string, ...string[]],
      prior,
      event: w.event ?? w.options.find((x) => x !== prior)!,
      gatewayWeight: w.gatewayWeight,
    };
  })
  .prefault({} as never);

const policies = list(oneOfField(POLICY_NAMES as unknown as readonly [PolicyName, ...PolicyName[]]), 1)
  .superRefine((p, ctx) => unique(p, [], ctx))
  .default([...POLICY_NAMES]);

const weight = rangeField(numberRange(0, 1e9));
const WEIGHTS = ["correct", "latencyPerMs", "abandonPerMs", "miss"] as const;
const DEFAULT_WEIGHTS = { correct: 100, latencyPerMs: 0.2, abandonPerMs: 0.5, miss: 50 } as const;
const gridOf = list(weight, 1).optional();
const valueModel = shape(
  {
    continuationMs: rangeField(numberRange(0, 60_000))
      .default(30)
      .meta(doc("The coordinator's own work after the decision (its continuation), ms.")),
    weights: group({
      correct: weight.default(DEFAULT_WEIGHTS.correct).meta(doc("Value of a correct decision.")),
      latencyPerMs: weight
        .default(DEFAULT_WEIGHTS.latencyPerMs)
        .meta(doc("Cost per ms from request to the end of the coordinator's continuation.")),
      abandonPerMs: weight
        .default(DEFAULT_WEIGHTS.abandonPerMs)
        .meta(
          doc(
            "Cost per ms of work thrown away (peers' lost work and the coordinator's discarded speculation).",
          ),
        ),
      miss: weight
        .default(DEFAULT_WEIGHTS.miss)
        .meta(doc("Cost of a missed deadline (no decision within the budget).")),
    }),
    grid: group({ correct: gridOf, latencyPerMs: gridOf, abandonPerMs: gridOf, miss: gridOf }).meta(
      doc("Sensitivity grid: every combination of these values is reported (at most 256)."),
    ),
  },
  "an object { continuationMs?, weights?, grid? }",
)
  .transform((v) => ({
    continuationMs: v.continuationMs,
    weights: v.weights,
    grid: Object.fromEntries(WEIGHTS.map((k) => [k, v.grid[k] ?? [v.weights[k]]])) as unknown as {
      readonly [K in (typeof WEIGHTS)[number]]: readonly number[];
    },
  }))
  .superRefine((v, ctx) => {
    const cells = WEIGHTS.reduce((n, k) => n * v.grid[k].length, 1);
    if (cells > 256)
      ctx.addIssue({
        code: "custom",
        message: "at most 256 combinations",
        path: ["grid"],
        input: `${cells} combinations`,
      });
  })
  .prefault({} as never);

/** Node config keys a scenario may set for every node; the launcher sets the others. */
const NODE_KEYS = [
  "probe",
  "concurrency",
  "queueLimit",
  "deadlineReserveMs",
  "defaultBudgetMs",
  "estimator",
  "abandonCostPriorMs",
  "drainGraceMs",
  "logLevel",
] as const;
const LAUNCHER_KEYS = ["nodeId", "listen", "peers", "handlers", "region", "dns"] as const;

const launcherSets = z.never({ error: "not set here: the launcher sets it" }).optional();
const nodeSection = z
  .strictObject({
    ...nodeConfigSchema
      .pick(
        Object.fromEntries(NODE_KEYS.map((k) => [k, true])) as { [K in (typeof NODE_KEYS)[number]]: true },
      )
      .partial().shape,
    ...Object.fromEntries(LAUNCHER_KEYS.map((k) => [k, launcherSets])),
  })
  .optional()
  .meta(doc("Node config keys merged into every generated node config (estimator, deadlineReserveMs, ...)."));

function unique(
  values: readonly string[],
  path: (string | number)[],
  ctx: z.RefinementCtx,
  key?: string,
): void {
  const seen = new Set<string>();
  values.forEach((v, i) => {
    if (seen.has(v))
      ctx.addIssue({
        code: "custom",
        message: "a value not used before in the list",
        path: [...path, i, ...(key === undefined ? [] : [key])],
        input: v,
      });
    seen.add(v);
  });
}

export const scenarioSchema = z
  .strictObject({
    name: name(),
    description: z.string({ error: "a string" }).default(""),
    seed: rangeField(intRange(0, 2 ** 32 - 1)).default(1),
    durationS: rangeField(numberAbove(0, 3600)).default(60),
    warmupS: rangeField(numberRange(0, 600))
      .default(3)
      .meta(doc("Load before the measured run, so every coordinator has fresh estimates; not counted.")),
    regions: list(region, 1),
    gateways: list(gateway, 0).default([]),
    coordinators: list(coordinator, 1),
    workload,
    policies,
    measure: group({
      ratePerS: rangeField(numberRange(0, 100))
        .default(2)
        .meta(
          doc("Direct all-peer fan-outs per second, outside every policy: the measured fan-out p50/p99."),
        ),
    }),
    node: nodeSection,
    valueModel,
  })
  .superRefine((s, ctx) => {
    unique(
      s.regions.map((r) => r.name),
      ["regions"],
      ctx,
      "name",
    );
    unique(
      s.gateways.map((g) => g.group),
      ["gateways"],
      ctx,
      "group",
    );
    unique(
      s.coordinators.map((c) => c.name),
      ["coordinators"],
      ctx,
      "name",
    );
    const names = s.regions.map((r) => r.name);
    const used = new Map<string, number>();
    s.gateways.forEach((g, i) => {
      const r = s.regions.find((x) => x.name === g.region);
      if (r === undefined) {
        ctx.addIssue({
          code: "custom",
          message: `one of the regions (${names.join(", ")})`,
          path: ["gateways", i, "region"],
          input: g.region,
        });
        return;
      }
      const before = used.get(g.region) ?? 0;
      if (before + g.peers > r.peers)
        ctx.addIssue({
          code: "custom",
          message: `at most the ${r.peers - before} peers of region ${g.region} not yet behind a gateway`,
          path: ["gateways", i, "peers"],
          input: g.peers,
        });
      used.set(g.region, before + g.peers);
    });
  })
  .transform(({ measure, node, ...rest }) => ({
    ...rest,
    measureRatePerS: measure.ratePerS,
    node: node ?? {},
  }));
