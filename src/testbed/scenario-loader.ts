/**
 * Scenario files: `testbed/scenarios/<name>.yaml|.yml|.json`, or any path. Every check throws
 * `TailswarmError("INVALID_CONFIG")` whose message names the file, the field (dotted path), the value
 * and what was expected, e.g. `seed-nat-tail.yaml: regions[1].peers: got -3, expected an integer >= 1`.
 */
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { basename, extname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parse as parseYaml } from "yaml";
import { TailswarmError } from "../errors.js";
import { checkNumber, optionError, optionsObject, stringOption } from "../peers/options.js";
import type { Options } from "../peers/options.js";
import { parseLatencyModelOptions } from "../peers/synthetic.js";
import { isPolicyName, POLICY_NAMES } from "../policy/types.js";
import type { PolicyName } from "../policy/types.js";
import type {
  CoordinatorSpec,
  GatewaySpec,
  RegionSpec,
  Scenario,
  ValueModelSpec,
  ValueWeights,
  WorkloadSpec,
} from "./scenario-types.js";

/** testbed/scenarios/ of the package (works from src/ and dist/). */
export const SCENARIO_DIR = fileURLToPath(new URL("../../testbed/scenarios/", import.meta.url));
export const DEFAULT_SCENARIO = "seed-nat-tail";

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const nameText = "1-64 characters: letters, digits, . _ - (starting with a letter or digit)";

/** Resolves a scenario name (in testbed/scenarios/) or a file path to an existing file. */
export function resolveScenarioPath(nameOrFile: string): string {
  const direct = resolve(nameOrFile);
  if (existsSync(direct) && extname(direct) !== "") return direct;
  for (const ext of [".yaml", ".yml", ".json"]) {
    const p = resolve(SCENARIO_DIR, `${nameOrFile}${ext}`);
    if (existsSync(p)) return p;
  }
  throw new TailswarmError(
    "INVALID_CONFIG",
    `--scenario: got ${JSON.stringify(nameOrFile)}, expected a file or a name in ${SCENARIO_DIR} (.yaml, .yml or .json)`,
  );
}

export async function loadScenario(nameOrFile: string): Promise<Scenario> {
  const file = resolveScenarioPath(nameOrFile);
  const text = await readFile(file, "utf8");
  let raw: unknown;
  try {
    raw = extname(file) === ".json" ? JSON.parse(text) : parseYaml(text);
  } catch (error) {
    throw new TailswarmError(
      "INVALID_CONFIG",
      `${basename(file)}: not valid ${extname(file).slice(1)}: ${String(error)}`,
      {
        cause: error,
      },
    );
  }
  return parseScenario(raw, file);
}

/** Validates a parsed scenario document; `file` only labels the errors. */
export function parseScenario(raw: unknown, file = ""): Scenario {
  try {
    return parse(raw, file);
  } catch (error) {
    if (TailswarmError.is(error) && file !== "") {
      throw new TailswarmError(error.code, `${basename(file)}: ${error.message}`, { cause: error });
    }
    throw error;
  }
}

const TOP = [
  "name",
  "description",
  "seed",
  "durationS",
  "warmupS",
  "regions",
  "gateways",
  "coordinators",
  "workload",
  "policies",
  "measure",
  "node",
  "valueModel",
];

function parse(raw: unknown, file: string): Scenario {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    throw optionError("(scenario)", raw, "an object with the keys " + TOP.join(", "));
  }
  const o = optionsObject(raw, "(scenario)", TOP);
  const name = required(o, "name", "", nameText, (v) => typeof v === "string" && NAME.test(v)) as string;
  const description = o.description === undefined ? "" : (stringOption(o, "description", "") ?? "");
  const seed = num(o, "seed", "", { integer: true, min: 0, max: 2 ** 32 - 1 }, 1);
  const durationS = num(o, "durationS", "", { above: 0, max: 3600 }, 60);
  const warmupS = num(o, "warmupS", "", { min: 0, max: 600 }, 3);
  const regions = list(o.regions, "regions", 1).map((r, i) => region(r, `regions[${i}]`));
  unique(
    regions.map((r) => r.name),
    "regions",
    "name",
  );
  const gateways = o.gateways === undefined ? [] : list(o.gateways, "gateways", 0);
  const gws = gateways.map((g, i) => gateway(g, `gateways[${i}]`, regions));
  unique(
    gws.map((g) => g.group),
    "gateways",
    "group",
  );
  const used = new Map<string, number>();
  gws.forEach((g, i) => {
    const total = (used.get(g.region) ?? 0) + g.peers;
    const r = regions.find((x) => x.name === g.region)!;
    if (total > r.peers) {
      throw optionError(
        `gateways[${i}].peers`,
        g.peers,
        `at most the ${r.peers - (total - g.peers)} peers of region ${g.region} not yet behind a gateway`,
      );
    }
    used.set(g.region, total);
  });
  const coordinators = list(o.coordinators, "coordinators", 1).map((c, i) =>
    coordinator(c, `coordinators[${i}]`),
  );
  unique(
    coordinators.map((c) => c.name),
    "coordinators",
    "name",
  );
  const workload = parseWorkload(o.workload);
  const policies = parsePolicies(o.policies);
  const m = optionsObject(o.measure, "measure", ["ratePerS"]);
  const measureRatePerS = num(m, "ratePerS", "measure", { min: 0, max: 100 }, 2);
  const node = optionsObject(o.node, "node", NODE_KEYS);
  for (const key of ["nodeId", "listen", "peers", "handlers", "region", "dns"]) {
    if (node[key] !== undefined)
      throw optionError(`node.${key}`, node[key], "not set here: the launcher sets it");
  }
  return {
    name,
    description,
    file,
    seed,
    durationS,
    warmupS,
    regions,
    gateways: gws,
    coordinators,
    workload,
    policies,
    measureRatePerS,
    node,
    valueModel: parseValueModel(o.valueModel),
  };
}

/** Node config keys a scenario may set for every node (the rest belong to the launcher). */
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
  // refused below with a clear message
  "nodeId",
  "listen",
  "peers",
  "handlers",
  "region",
  "dns",
];

function region(raw: unknown, path: string): RegionSpec {
  const r = optionsObject(raw, path, ["name", "peers", "latency"]);
  const name = required(r, "name", path, nameText, (v) => typeof v === "string" && NAME.test(v)) as string;
  const peers = reqNum(r, "peers", path, { integer: true, min: 1, max: 500 });
  if (r.latency === undefined)
    throw optionError(`${path}.latency`, undefined, "{ body, tail?, medianSpread? }");
  const l = optionsObject(r.latency, `${path}.latency`, ["body", "tail", "medianSpread"]);
  const model = parseLatencyModelOptions({ body: l.body, tail: l.tail }, `${path}.latency`);
  if (l.body === undefined) throw optionError(`${path}.latency.body`, undefined, "{ medianMs, sigma }");
  return {
    name,
    peers,
    body: model.body,
    ...(model.tail && { tail: model.tail }),
    medianSpread: num(l, "medianSpread", `${path}.latency`, { min: 0, max: 3 }, 0),
  };
}

function gateway(raw: unknown, path: string, regions: readonly RegionSpec[]): GatewaySpec {
  const g = optionsObject(raw, path, ["group", "region", "peers", "episodesPerSecond", "durationMs"]);
  const group = required(g, "group", path, nameText, (v) => typeof v === "string" && NAME.test(v)) as string;
  const names = regions.map((r) => r.name);
  const regionName = required(g, "region", path, `one of the regions (${names.join(", ")})`, (v) =>
    names.includes(v as string),
  ) as string;
  const peers = reqNum(g, "peers", path, { integer: true, min: 1, max: 500 });
  const episodesPerSecond = reqNum(g, "episodesPerSecond", path, { min: 0, max: 1000 });
  if (g.durationMs === undefined) throw optionError(`${path}.durationMs`, undefined, "{ min, max } in ms");
  const d = optionsObject(g.durationMs, `${path}.durationMs`, ["min", "max"]);
  const min = reqNum(d, "min", `${path}.durationMs`, { min: 0, max: 600_000 });
  const max = reqNum(d, "max", `${path}.durationMs`, { min, max: 600_000 });
  return { group, region: regionName, peers, episodesPerSecond, durationMs: { min, max } };
}

function coordinator(raw: unknown, path: string): CoordinatorSpec {
  const c = optionsObject(raw, path, ["name", "budgetMs", "ratePerS"]);
  return {
    name: required(c, "name", path, nameText, (v) => typeof v === "string" && NAME.test(v)) as string,
    budgetMs: reqNum(c, "budgetMs", path, { above: 0, max: 60_000 }),
    ratePerS: num(c, "ratePerS", path, { above: 0, max: 200 }, 4),
  };
}

function parseWorkload(raw: unknown): WorkloadSpec {
  const w = optionsObject(raw, "workload", ["options", "prior", "event", "gatewayWeight"]);
  const options = w.options ?? ["hold", "act"];
  const ok =
    Array.isArray(options) &&
    options.length >= 2 &&
    options.every((x) => typeof x === "string" && x.length > 0) &&
    new Set(options).size === options.length;
  if (!ok)
    throw optionError("workload.options", options, "an array of at least 2 distinct non-empty strings");
  const opts = options as [string, string, ...string[]];
  const prior = w.prior ?? opts[0];
  if (!opts.includes(prior as string))
    throw optionError("workload.prior", prior, `one of ${opts.join(", ")}`);
  const event = w.event ?? opts.find((x) => x !== prior);
  if (!opts.includes(event as string) || event === prior) {
    throw optionError(
      "workload.event",
      event,
      `one of ${opts.join(", ")} other than the prior ${JSON.stringify(prior)}`,
    );
  }
  const gw = w.gatewayWeight ?? "auto";
  const gatewayWeight =
    gw === "auto" ? "auto" : checkNumber(gw, "workload.gatewayWeight", { above: 0, max: 1e6 });
  return { options: opts, prior: prior as string, event: event as string, gatewayWeight };
}

function parsePolicies(raw: unknown): PolicyName[] {
  if (raw === undefined) return [...POLICY_NAMES];
  const items = list(raw, "policies", 1);
  items.forEach((p, i) => {
    if (!isPolicyName(p)) throw optionError(`policies[${i}]`, p, `one of ${POLICY_NAMES.join(", ")}`);
  });
  unique(items as string[], "policies", "");
  return items as PolicyName[];
}

const WEIGHTS: readonly (keyof ValueWeights)[] = ["correct", "latencyPerMs", "abandonPerMs", "miss"];
const DEFAULT_WEIGHTS: ValueWeights = { correct: 100, latencyPerMs: 0.2, abandonPerMs: 0.5, miss: 50 };

function parseValueModel(raw: unknown): ValueModelSpec {
  const v = optionsObject(raw, "valueModel", ["continuationMs", "weights", "grid"]);
  const w = optionsObject(v.weights, "valueModel.weights", WEIGHTS);
  const weights = Object.fromEntries(
    WEIGHTS.map((k) => [k, num(w, k, "valueModel.weights", { min: 0, max: 1e9 }, DEFAULT_WEIGHTS[k])]),
  ) as unknown as ValueWeights;
  const g = optionsObject(v.grid, "valueModel.grid", WEIGHTS);
  const grid = Object.fromEntries(
    WEIGHTS.map((k) => {
      if (g[k] === undefined) return [k, [weights[k]]];
      const values = list(g[k], `valueModel.grid.${k}`, 1);
      return [k, values.map((x, i) => checkNumber(x, `valueModel.grid.${k}[${i}]`, { min: 0, max: 1e9 }))];
    }),
  ) as unknown as ValueModelSpec["grid"];
  const cells = WEIGHTS.reduce((n, k) => n * grid[k].length, 1);
  if (cells > 256) throw optionError("valueModel.grid", `${cells} combinations`, "at most 256 combinations");
  return {
    continuationMs: num(v, "continuationMs", "valueModel", { min: 0, max: 60_000 }, 30),
    weights,
    grid,
  };
}

// ---- small helpers over src/peers/options.ts ----

function at(path: string, key: string): string {
  return path === "" ? key : `${path}.${key}`;
}

function num(
  o: Options,
  key: string,
  path: string,
  rule: Parameters<typeof checkNumber>[2],
  fallback: number,
): number {
  return o[key] === undefined ? fallback : checkNumber(o[key], at(path, key), rule);
}

function reqNum(o: Options, key: string, path: string, rule: Parameters<typeof checkNumber>[2]): number {
  return checkNumber(o[key], at(path, key), rule);
}

function required(
  o: Options,
  key: string,
  path: string,
  expected: string,
  ok: (v: unknown) => boolean,
): unknown {
  if (!ok(o[key])) throw optionError(at(path, key), o[key], expected);
  return o[key];
}

function list(raw: unknown, path: string, min: number): unknown[] {
  if (!Array.isArray(raw) || raw.length < min) {
    throw optionError(path, raw, min > 0 ? `a list of at least ${min} item(s)` : "a list");
  }
  return raw;
}

function unique(values: readonly string[], path: string, key: string): void {
  const seen = new Set<string>();
  values.forEach((v, i) => {
    if (seen.has(v))
      throw optionError(
        `${path}[${i}]${key === "" ? "" : `.${key}`}`,
        v,
        "a value not used before in the list",
      );
    seen.add(v);
  });
}
