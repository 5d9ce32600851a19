/**
 * Scenario files: `testbed/scenarios/<name>.yaml|.yml|.json`, or any path, validated against the one
 * scenario schema (scenario-schema.ts). A bad scenario throws `TailswarmError("INVALID_CONFIG")`
 * listing every problem in the one message style, e.g.
 * `regions[1].peers: got -3 (from file /…/seed-nat-tail.yaml), expected an integer >= 1 <= 500`.
 */
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { extname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parse as parseYaml } from "yaml";
import { TailswarmError, expectation } from "../errors.js";
import { describeIssues } from "../node/config/issues.js";
import { scenarioSchema } from "./scenario-schema.js";
import type { Scenario } from "./scenario-types.js";

/** testbed/scenarios/ of the package (works from src/ and dist/). */
export const SCENARIO_DIR = fileURLToPath(new URL("../../testbed/scenarios/", import.meta.url));
export const DEFAULT_SCENARIO = "seed-nat-tail";

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
    expectation("--scenario", nameOrFile, `a file or a name in ${SCENARIO_DIR} (.yaml, .yml or .json)`),
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
      expectation(
        "--scenario",
        file,
        `a file of valid ${extname(file) === ".json" ? "JSON" : "YAML"} (${String(error)})`,
      ),
      { cause: error },
    );
  }
  return parseScenario(raw, file);
}

/** Validates a parsed scenario document; `file` labels the errors (`from file …`) and the result. */
export function parseScenario(raw: unknown, file = ""): Scenario {
  const source = file === "" ? undefined : `file ${file}`;
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    throw new TailswarmError(
      "INVALID_CONFIG",
      expectation("(scenario)", raw, "a mapping with the keys of a scenario", source),
    );
  }
  const result = scenarioSchema.safeParse(raw, { reportInput: true });
  if (!result.success) {
    const problems = describeIssues(scenarioSchema, result.error.issues, raw, () => ({
      ...(source !== undefined && { label: source }),
    }));
    throw new TailswarmError("INVALID_CONFIG", `invalid scenario:\n  ${problems.join("\n  ")}`);
  }
  // The node section as written (validated): the generated node configs set these keys, nothing more.
  const node = (raw as { node?: Record<string, unknown> }).node ?? {};
  return { ...result.data, file, node };
}
