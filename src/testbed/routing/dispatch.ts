/**
 * `tailswarm testbed --scenario agentic-context`: a scenario file with `runner: routing` is run by the
 * routing runner (run-agentic.ts) instead of the speculation-policy testbed.
 */
import { readFile } from "node:fs/promises";
import { parse } from "yaml";
import { resolveScenarioPath } from "../scenario-loader.js";
import { agenticScenarioFrom } from "./agentic-scenario.js";
import type { AgenticScenario } from "./agentic-scenario.js";
import { runAgentic } from "./run-agentic.js";

/** The routing scenario named by `nameOrFile`, or undefined when it is not a `runner: routing` file. */
export async function routingScenarioOf(nameOrFile: string): Promise<AgenticScenario | undefined> {
  const file = resolveScenarioPath(nameOrFile);
  const raw = parse(await readFile(file, "utf8")) as unknown;
  if (typeof raw !== "object" || raw === null || (raw as { runner?: unknown }).runner !== "routing")
    return undefined;
  return agenticScenarioFrom(raw, file);
}

/** Runs a routing scenario; returns the printed table. */
export async function runRoutingScenario(
  scenario: AgenticScenario,
  overrides: { durationS?: number; warmupS?: number; seed?: number; outDir?: string },
): Promise<string> {
  const s: AgenticScenario = {
    ...scenario,
    ...(overrides.durationS !== undefined && { durationS: overrides.durationS }),
    ...(overrides.warmupS !== undefined && { warmupS: overrides.warmupS }),
    ...(overrides.seed !== undefined && { seed: overrides.seed }),
  };
  const report = await runAgentic(s, {
    outDir: overrides.outDir ?? `testbed/out/${s.name}`,
    log: (l) => process.stderr.write(`${l}\n`),
  });
  return `${report.table}\n`;
}
