/**
 * `tailswarm sim` — the slotted simulator of the MABP paper (docs/background.md), run on the same
 * src/routing code as the node. Prints our Table I beside the paper's and the Proposition 3 gaps, and
 * writes sim-report.json plus SVG charts to --out.
 *
 *   tailswarm sim --quick
 *   tailswarm sim --workload all --out sim-out --seed 1
 */
import { expectation } from "../../errors.js";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { buildSimReport, formatReport, type SimWorkloadName } from "../../sim/report.js";
import { EXIT, formatHelp, numberFlag, oneOf, parseFlags, UsageError } from "../args.js";
import { guard } from "../verb-errors.js";

const FLAGS = {
  workload: { type: "string", valueName: "NAME", description: "mixed | separation | all (default all)" },
  out: {
    type: "string",
    valueName: "DIR",
    description: "where sim-report.json and the charts go (default sim-out)",
  },
  seed: { type: "string", valueName: "N", description: "first seed; runs use N, N+1, ... (default 1)" },
  seeds: { type: "string", valueName: "COUNT", description: "seeds per point (default 3; 2 with --quick)" },
  quick: { type: "boolean", description: "fewer loads and sweep points: seconds instead of minutes" },
  json: { type: "boolean", description: "print the report JSON instead of the tables" },
} as const;

const USAGE =
  "tailswarm sim [--workload mixed|separation|all] [--out DIR] [--seed N] [--seeds COUNT] [--quick] [--json]";
const DESCRIPTION =
  "Reproduce the MABP paper's evaluation on a deterministic slotted simulator: Table I (SP, JSQ, BP,\n" +
  "Cost-BP, GreedyCache-BP, MABP) on the mixed RAG–MoE–agentic workload and the Proposition 3 gap on the\n" +
  "two-branch separation instance, beside the paper's figures.";

export function run(argv: string[]): Promise<number> {
  return guard("sim", () => simulate(argv));
}

async function simulate(argv: string[]): Promise<number> {
  const { values, help } = parseFlags(argv, FLAGS);
  if (help) {
    process.stdout.write(formatHelp(USAGE, DESCRIPTION, FLAGS));
    return EXIT.ok;
  }
  const workload: SimWorkloadName = oneOf("--workload", values.workload ?? "all", [
    "mixed",
    "separation",
    "all",
  ] as const);
  const quick = values.quick === true;
  const json = values.json === true;
  const first = numberFlag(values, "seed", { min: 0 }) ?? 1;
  const count = numberFlag(values, "seeds", { min: 1 }) ?? (quick ? 2 : 3);
  if (!Number.isInteger(first) || !Number.isInteger(count)) {
    throw new UsageError(
      expectation(
        Number.isInteger(first) ? "--seeds" : "--seed",
        Number.isInteger(first) ? count : first,
        "an integer",
      ),
    );
  }
  const seeds = Array.from({ length: count }, (_, i) => first + i);
  const out = values.out ?? "sim-out";

  const started = performance.now();
  const { report, charts } = buildSimReport({
    workload,
    seeds,
    quick,
    progress: (m) => process.stderr.write(`  ${m}\n`),
  });
  const elapsed = Number(((performance.now() - started) / 1000).toFixed(1));
  report.meta.elapsed_s = elapsed;
  await mkdir(out, { recursive: true });
  await writeFile(join(out, "sim-report.json"), JSON.stringify(report, null, 2) + "\n");
  for (const [name, svg] of Object.entries(charts)) await writeFile(join(out, name), svg);
  if (json) process.stdout.write(JSON.stringify(report, null, 2) + "\n");
  else {
    process.stdout.write(formatReport(report));
    const files = ["sim-report.json", ...Object.keys(charts)].map((f) => join(out, f));
    process.stdout.write(`\nwrote ${files.join(", ")} in ${elapsed} s\n`);
  }
  return EXIT.ok;
}
