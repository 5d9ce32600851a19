/**
 * `tsx src/testbed/routing/main.ts [SCENARIO] [--out DIR] [--in-process]`: runs a `runner: routing`
 * scenario (default testbed/scenarios/agentic-context.yaml) and prints its Table II.
 */
import { loadAgenticScenario } from "./agentic-scenario.js";
import { runAgentic } from "./run-agentic.js";

async function main(argv: readonly string[]): Promise<void> {
  const file = argv.find((a) => !a.startsWith("--")) ?? "testbed/scenarios/agentic-context.yaml";
  const outAt = argv.indexOf("--out");
  const outDir = outAt >= 0 ? argv[outAt + 1] : "testbed-out/agentic-context";
  let scenario = await loadAgenticScenario(file);
  if (argv.includes("--in-process")) scenario = { ...scenario, processes: false };
  const report = await runAgentic(scenario, { outDir, log: (l) => process.stderr.write(`${l}\n`) });
  process.stdout.write(`${report.table}\n`);
}

main(process.argv.slice(2)).catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
});
