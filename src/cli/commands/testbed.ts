/**
 * `tailswarm testbed [--scenario NAME|FILE] [--duration S] [--out DIR] [--seed N]`: the founding note's swarm
 * as real node processes on loopback, the policies compared on one request stream, a report with
 * charts (docs/testbed.md).
 */
import { TailswarmError, expectation } from "../../errors.js";
import { POLICY_NAMES } from "../../policy/types.js";
import { runTestbed } from "../../testbed/run-testbed.js";
import { DEFAULT_SCENARIO, loadScenario } from "../../testbed/scenario-loader.js";
import { routingScenarioOf, runRoutingScenario } from "../../testbed/routing/dispatch.js";
import { replicatedScenarioOf, runReplicatedScenario } from "../../testbed/replicated/dispatch.js";
import { EXIT, formatHelp, numberFlag, oneOf, parseFlags, UsageError } from "../args.js";
import { CliError, guard, writeError } from "../verb-errors.js";
import { ATTACH_FLAGS, attachCommand, emitComposeCommand } from "./testbed-attach.js";

const FLAGS = {
  scenario: {
    type: "string",
    valueName: "NAME|FILE",
    description: `a scenario in testbed/scenarios/ or a YAML/JSON file (default ${DEFAULT_SCENARIO})`,
  },
  duration: { type: "string", valueName: "S", description: "measured seconds (default: the scenario's)" },
  warmup: {
    type: "string",
    valueName: "S",
    description: "warm-up seconds before counting (default: the scenario's)",
  },
  out: {
    type: "string",
    valueName: "DIR",
    description: "where the report goes (default testbed/out/<scenario>)",
  },
  seed: { type: "string", valueName: "N", description: "random seed (default: the scenario's)" },
  json: { type: "boolean", description: "print report.json instead of the table" },
  processes: {
    type: "string",
    valueName: "grouped|per-node",
    description:
      "grouped (default): one process per region's peers and one per coordinator ('tailswarm host'); per-node: one process per node",
  },
  ...ATTACH_FLAGS,
} as const;

const USAGE =
  "tailswarm testbed [--scenario NAME|FILE] [--duration S] [--out DIR] [--seed N] [--warmup S] [--json]\n" +
  "                  [--processes grouped|per-node]\n" +
  "                  [--attach NAME=HOST:PORT,... [--attach-peers '{id}:PORT']] [--emit-compose DIR]";
const DESCRIPTION =
  "Launch the scenario's peers and coordinators as real node processes on loopback, send every request of\n" +
  `one seeded stream under each policy (${POLICY_NAMES.join(", ")}), and write\n` +
  "report.json, report.html (charts) and report.txt. Ctrl-C stops every process and still writes the report.";

export function run(argv: string[]): Promise<number> {
  return guard("testbed", () => testbed(argv));
}

/** A scenario the loader refused: exit 2, as a bad flag would be. */
const badScenario = (error: TailswarmError): CliError =>
  new CliError(error.message, {
    exitCode: EXIT.usage,
    cause: error,
    hint: "tailswarm config schema scenario prints what a scenario file may hold",
  });

async function testbed(argv: string[]): Promise<number> {
  const parsed = parseFlags(argv, FLAGS);
  if (parsed.help) {
    process.stdout.write(formatHelp(USAGE, DESCRIPTION, FLAGS));
    return EXIT.ok;
  }
  const values = parsed.values;
  numberFlag(values, "duration", { min: 0.5 });
  numberFlag(values, "warmup", { min: 0 });
  const seedFlag = numberFlag(values, "seed", { min: 0 });
  const processes =
    values.processes === undefined
      ? undefined
      : oneOf("--processes", values.processes, ["grouped", "per-node"]);
  if (seedFlag !== undefined && !Number.isInteger(seedFlag))
    throw new UsageError(expectation("--seed", seedFlag, "an integer >= 0"));
  let scenario;
  try {
    const routing = await routingScenarioOf(values.scenario ?? DEFAULT_SCENARIO);
    if (routing !== undefined) {
      const [durationS, warmupS, seed] = ["duration", "warmup", "seed"].map((k) => numberFlag(values, k));
      process.stdout.write(
        await runRoutingScenario(routing, {
          durationS,
          warmupS,
          seed,
          ...(values.out && { outDir: values.out }),
        }),
      );
      return EXIT.ok;
    }
    const replicated = await replicatedScenarioOf(values.scenario ?? DEFAULT_SCENARIO);
    if (replicated !== undefined) {
      const [durationS, warmupS, seed] = ["duration", "warmup", "seed"].map((k) => numberFlag(values, k));
      const controller = new AbortController();
      const onSignal = (): void => controller.abort();
      process.once("SIGINT", onSignal);
      try {
        process.stdout.write(
          await runReplicatedScenario(replicated, {
            durationS,
            warmupS,
            seed,
            signal: controller.signal,
            ...(values.out && { outDir: values.out }),
          }),
        );
      } finally {
        process.off("SIGINT", onSignal);
      }
      return controller.signal.aborted ? 130 : EXIT.ok;
    }
    scenario = await loadScenario(values.scenario ?? DEFAULT_SCENARIO);
  } catch (error) {
    if (TailswarmError.is(error, "INVALID_CONFIG")) throw badScenario(error);
    throw error;
  }
  const duration = numberFlag(values, "duration");
  const warmup = numberFlag(values, "warmup");
  const seed = numberFlag(values, "seed");
  scenario = {
    ...scenario,
    ...(duration !== undefined && { durationS: duration }),
    ...(warmup !== undefined && { warmupS: warmup }),
    ...(seed !== undefined && { seed }),
  };
  if (values["emit-compose"] !== undefined) return emitComposeCommand(scenario, values["emit-compose"]);
  const controller = new AbortController();
  let signals = 0;
  const onSignal = (sig: NodeJS.Signals): void => {
    signals++;
    if (signals === 1) {
      process.stderr.write(`\n${sig}: stopping the load, then every node; the report is still written\n`);
      controller.abort();
    } else {
      process.stderr.write(`\n${sig} again: exiting now (nodes are killed on exit)\n`);
      process.exit(130);
    }
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  try {
    if (values.attach !== undefined) {
      try {
        return await attachCommand(scenario, { ...values, attach: values.attach }, controller.signal);
      } catch (error) {
        if (!TailswarmError.is(error, "INVALID_CONFIG")) throw error;
        throw new CliError(error.message, { exitCode: EXIT.usage, cause: error });
      }
    }
    const result = await runTestbed({
      scenario,
      outDir: values.out ?? `testbed/out/${scenario.name}`,
      signal: controller.signal,
      ...(processes !== undefined && { processes }),
    });
    process.stdout.write(values.json === true ? `${JSON.stringify(result.report, null, 2)}\n` : result.table);
    process.stderr.write(`report: ${result.files.json}\n        ${result.files.html}\n`);
    const left = result.report.processes?.left_running ?? [];
    if (left.length > 0) {
      writeError("testbed", `processes still running after stop: ${left.join(", ")}`);
      return EXIT.failure;
    }
    return controller.signal.aborted ? 130 : EXIT.ok;
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  }
}
