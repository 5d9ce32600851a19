/**
 * `tailswarm testbed --scenario replicated-tail`: a scenario file with `runner: replicated` is run by
 * the replicated runner (run-replicated.ts) instead of the speculation-policy testbed.
 */
import { readFile } from "node:fs/promises";
import { parse } from "yaml";
import { resolveScenarioPath } from "../scenario-loader.js";
import { runReplicated } from "./run-replicated.js";
import { replicatedScenarioFrom } from "./scenario.js";
import type { ReplicatedScenario } from "./scenario.js";

/** The replicated scenario named by `nameOrFile`, or undefined when it is not a `runner: replicated` file. */
export async function replicatedScenarioOf(nameOrFile: string): Promise<ReplicatedScenario | undefined> {
  const file = resolveScenarioPath(nameOrFile);
  const raw = parse(await readFile(file, "utf8")) as unknown;
  if (typeof raw !== "object" || raw === null || (raw as { runner?: unknown }).runner !== "replicated")
    return undefined;
  return replicatedScenarioFrom(raw, file);
}

/** Runs a replicated scenario; returns the printed table. */
export async function runReplicatedScenario(
  scenario: ReplicatedScenario,
  overrides: { durationS?: number; warmupS?: number; seed?: number; outDir?: string; signal?: AbortSignal },
): Promise<string> {
  const s: ReplicatedScenario = {
    ...scenario,
    ...(overrides.durationS !== undefined && { durationS: overrides.durationS }),
    ...(overrides.warmupS !== undefined && { warmupS: overrides.warmupS }),
    ...(overrides.seed !== undefined && { seed: overrides.seed }),
  };
  const { table } = await runReplicated(s, {
    outDir: overrides.outDir ?? `testbed/out/${s.name}`,
    ...(overrides.signal !== undefined && { signal: overrides.signal }),
    log: (l) => process.stderr.write(`${l}\n`),
  });
  return table;
}
