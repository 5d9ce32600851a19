/**
 * The `agentic-context` scenario (testbed/scenarios/agentic-context.yaml, `runner: routing`): context
 * workers of unequal capacity, one seeded request stream of agentic classes whose contexts follow a Zipf
 * law, and the routing policies compared on it (the MABP paper's Table II). Loaded from YAML or JSON; every
 * bad field is an INVALID_CONFIG naming it.
 */
import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import { parse } from "yaml";
import { invalid } from "../../errors.js";
import { parseContextWorkerOptions } from "../../peers/context-worker.js";
import type { ContextWorkerOptions } from "../../peers/context-worker.js";
import type { RetentionPolicyName } from "../../routing/retention.js";
import { ROUTING_POLICIES } from "../../routing/router.js";

export interface RequestClassSpec {
  readonly name: string;
  /** Share of the stream (normalised over the classes). */
  readonly share: number;
  /** Distinct contexts of the class; context i has Zipf weight 1 / (i+1)^skew. */
  readonly contexts: number;
}

/** One compared row: a routing policy, and optionally a retention override (`mabp@marginal-value`). */
export interface PolicyRow {
  readonly label: string;
  readonly routing: string;
  readonly retention: RetentionPolicyName;
}

export interface AgenticScenario {
  readonly name: string;
  readonly file: string;
  readonly seed: number;
  /** Measured seconds per policy, after `warmupS` of the same stream (memory and estimates fill). */
  readonly durationS: number;
  readonly warmupS: number;
  /** Requests per second (Poisson). */
  readonly ratePerS: number;
  /** End-to-end latency objective for goodput, ms. */
  readonly sloMs: number;
  /** Budget of every request (its deadline), ms. */
  readonly budgetMs: number;
  /** Jobs each peer serves at once; one entry per peer. */
  readonly capacities: readonly number[];
  /** Admission limit per unit of capacity (a peer's maxBacklog = this × its capacity); 0: worker.maxBacklog. */
  readonly maxBacklogPerSlot: number;
  /** Worker options shared by every peer (capacity and retention are set per peer / per row). */
  readonly worker: ContextWorkerOptions;
  readonly classes: readonly RequestClassSpec[];
  readonly zipfSkew: number;
  readonly policies: readonly PolicyRow[];
  /** MABP's ν. */
  readonly nu: number;
  readonly reservationTtlMs: number;
  /** PeerViewBook staleness, ms. */
  readonly staleMs: number;
  /** Launch peers as processes (true) or serve them in this process on loopback (false). */
  readonly processes: boolean;
}

const RETENTIONS = ["marginal-value", "lru", "popularity"] as const;

function bad(path: string, value: unknown, expected: string): never {
  throw invalid(path, value, expected, { code: "INVALID_CONFIG" });
}

function num(o: Record<string, unknown>, key: string, fallback: number, min = 0, integer = false): number {
  const v = o[key] ?? fallback;
  if (typeof v !== "number" || !Number.isFinite(v) || v < min || (integer && !Number.isInteger(v))) {
    bad(key, v, `${integer ? "an integer" : "a number"} >= ${min}`);
  }
  return v;
}

/** A policy row from `mabp` or `mabp@marginal-value`. */
export function parsePolicyRow(
  text: unknown,
  defaultRetention: RetentionPolicyName,
  path: string,
): PolicyRow {
  if (typeof text !== "string") bad(path, text, "a policy name, optionally @retention");
  const [routing, retention = defaultRetention] = text.split("@");
  if (!(ROUTING_POLICIES as readonly string[]).includes(routing!)) {
    bad(path, text, `one of ${ROUTING_POLICIES.join(", ")} (optionally @${RETENTIONS.join("|@")})`);
  }
  if (!(RETENTIONS as readonly string[]).includes(retention)) bad(path, text, `@${RETENTIONS.join("|@")}`);
  return { label: text, routing: routing!, retention: retention as RetentionPolicyName };
}

/** Validates a parsed scenario object. */
export function agenticScenarioFrom(raw: unknown, file = ""): AgenticScenario {
  if (typeof raw !== "object" || raw === null) bad("scenario", raw, "an object");
  const o = raw as Record<string, unknown>;
  if (o.runner !== undefined && o.runner !== "routing") bad("runner", o.runner, '"routing"');
  const worker = parseContextWorkerOptions(o.worker ?? {}, "worker");
  const capacities = o.capacities ?? [1, 1, 2, 2, 3, 3];
  if (!Array.isArray(capacities) || capacities.length < 2) {
    bad("capacities", capacities, "a list of at least two peer capacities");
  }
  capacities.forEach((c, i) => {
    if (!Number.isInteger(c) || (c as number) < 1) bad(`capacities[${i}]`, c, "an integer >= 1");
  });
  const classesRaw = o.classes ?? [
    { name: "rag", share: 0.4, contexts: 40 },
    { name: "moe", share: 0.3, contexts: 40 },
    { name: "agent", share: 0.3, contexts: 40 },
  ];
  if (!Array.isArray(classesRaw) || classesRaw.length === 0) bad("classes", classesRaw, "a non-empty list");
  const classes = classesRaw.map((c: unknown, i): RequestClassSpec => {
    const r = (c ?? {}) as Record<string, unknown>;
    if (typeof r.name !== "string" || r.name === "" || r.name.includes("/")) {
      bad(`classes[${i}].name`, r.name, "a non-empty name without '/'");
    }
    return {
      name: r.name,
      share: num(r, "share", 1, 0),
      contexts: num(r, "contexts", 40, 1, true),
    };
  });
  const policiesRaw = o.policies ?? ["random", "jsq", "bp", "affinity", "mabp"];
  if (!Array.isArray(policiesRaw) || policiesRaw.length === 0)
    bad("policies", policiesRaw, "a non-empty list");
  return {
    name: typeof o.name === "string" ? o.name : "agentic-context",
    file,
    seed: num(o, "seed", 7, 0, true),
    durationS: num(o, "durationS", 20, 0.1),
    warmupS: num(o, "warmupS", 4, 0),
    ratePerS: num(o, "ratePerS", 100, 0.1),
    sloMs: num(o, "sloMs", 300, 1),
    budgetMs: num(o, "budgetMs", 2_000, 1),
    capacities: capacities as number[],
    maxBacklogPerSlot: num(o, "maxBacklogPerSlot", 0, 0, true),
    worker,
    classes,
    zipfSkew: num(o, "zipfSkew", 1, 0),
    policies: policiesRaw.map((p, i) => parsePolicyRow(p, worker.retention, `policies[${i}]`)),
    nu: num(o, "nu", 5, 0),
    reservationTtlMs: num(o, "reservationTtlMs", 1_000, 0),
    staleMs: num(o, "staleMs", 1_000, 1),
    processes: o.processes === undefined ? true : o.processes === true,
  };
}

/** Reads and validates a scenario file (YAML or JSON). */
export async function loadAgenticScenario(path: string): Promise<AgenticScenario> {
  const file = resolve(path);
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    throw invalid("--scenario", file, `a readable file (${(error as Error).message})`, {
      code: "INVALID_CONFIG",
      cause: error,
    });
  }
  return agenticScenarioFrom(parse(text) as unknown, file);
}
