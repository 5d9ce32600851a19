/**
 * `tailswarm demo [--json] [--keep]`: the rule at work in a few seconds. Starts a coordinator and
 * three peers on loopback (one slow) in one `tailswarm host` process, warms the estimates up, then
 * asks for the same task with three budgets and prints each decision with its reason and the
 * inequality that decided it, as the coordinator's flight recorder (`tailswarm decisions`) has it.
 * Stops every process it started, also on Ctrl-C or SIGTERM (exit 130/143); `--keep` leaves the
 * swarm running until then, to try the client verbs on it.
 */
import { formatDecisions } from "../../telemetry/format-decisions.js";
import { EXIT, formatHelp, parseFlags } from "../args.js";
import { runDemo } from "../demo/script.js";
import type { DemoRun, DemoStep } from "../demo/script.js";
import { DEMO_ESTIMATOR, startDemoSwarm } from "../demo/swarm.js";
import type { DemoSwarm } from "../demo/swarm.js";
import { CliError, guard } from "../verb-errors.js";
import { formatStatus } from "./status.js";

const FLAGS = {
  json: {
    type: "boolean",
    description: "print one JSON object: the swarm, the warm-up and every step's decision",
  },
  keep: {
    type: "boolean",
    description:
      "leave the swarm running after the demo (Ctrl-C stops it), to try status, coordinate, decisions",
  },
} as const;

const USAGE = "tailswarm demo [--json] [--keep]";
const DESCRIPTION =
  "Start a coordinator and three peers on loopback (one slow) in one 'tailswarm host' process, make the\n" +
  "estimates fresh, then send one task with a budget well above the fan-out p99, one between p50 and\n" +
  "p99, and one below p50: speculate, synchronous, degrade, each with the inequality that decided it.\n" +
  "Every process it starts is stopped at the end, on Ctrl-C and on SIGTERM.\n\n" +
  "exit codes: 0 done, 1 the swarm did not start or a call failed, 2 usage, 130/143 stopped by SIGINT/SIGTERM";

const SIGNAL_EXIT: Partial<Record<NodeJS.Signals, number>> = { SIGINT: 130, SIGTERM: 143 };

export function run(argv: string[]): Promise<number> {
  return guard("demo", async () => {
    const { values, help } = parseFlags(argv, FLAGS);
    if (help) {
      process.stdout.write(formatHelp(USAGE, DESCRIPTION, FLAGS));
      return EXIT.ok;
    }
    const json = values.json === true;
    const out = (text: string): void => void (json ? process.stderr : process.stdout).write(text);
    const controller = new AbortController();
    let signalled: NodeJS.Signals | undefined;
    let swarm: DemoSwarm | undefined;
    const onSignal = (sig: NodeJS.Signals): void => {
      if (signalled !== undefined) {
        swarm?.kill();
        process.exit(SIGNAL_EXIT[sig] ?? 1);
      }
      signalled = sig;
      out(`\n${sig}: stopping the swarm\n`);
      controller.abort();
    };
    process.on("SIGINT", onSignal);
    process.on("SIGTERM", onSignal);
    const started = Date.now();
    try {
      swarm = await startDemoSwarm(controller.signal);
      out(swarmText(swarm));
      let result: DemoRun | undefined;
      try {
        result = await runDemo(swarm, {
          signal: controller.signal,
          progress: (l) => json && out(`  ${l}\n`),
        });
      } catch (error) {
        if (signalled === undefined) throw error;
      }
      if (result !== undefined && signalled === undefined) {
        if (json) process.stdout.write(`${JSON.stringify(jsonOf(swarm, result, started))}\n`);
        else process.stdout.write(runText(swarm, result));
        if (values.keep === true) {
          out(keepText(swarm));
          await new Promise<void>((resolve) => controller.signal.addEventListener("abort", () => resolve()));
        }
      }
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      throw new CliError(message, { exitCode: EXIT.failure, cause: error });
    } finally {
      if (swarm !== undefined) {
        const clean = await swarm.stop();
        out(
          clean
            ? `stopped the swarm: no process left (${((Date.now() - started) / 1000).toFixed(1)} s in all)\n`
            : `tailswarm demo: the swarm's process group ${swarm.process.pid} is still alive after SIGKILL\n`,
        );
      }
      process.off("SIGINT", onSignal);
      process.off("SIGTERM", onSignal);
    }
    return signalled === undefined ? EXIT.ok : (SIGNAL_EXIT[signalled] ?? EXIT.failure);
  });
}

function swarmText(swarm: DemoSwarm): string {
  const rows = [
    `  coordinator  ${swarm.coordinator}`,
    ...swarm.peers.map((p) => `  ${p.id.padEnd(11)}  ${p.address.padEnd(16)}  ${p.latency}`),
  ];
  return (
    `tailswarm demo: a coordinator and three vote peers on loopback, in one 'tailswarm host' process (pid ${swarm.process.pid})\n` +
    `${rows.join("\n")}\n\n`
  );
}

const ms = (v: number | null): string => (v === null ? "?" : `${Number(v.toFixed(1))} ms`);

function stepText(i: number, title: string, s: DemoStep, address: string): string {
  const d = s.decision;
  return (
    `${i}. ${title} (deadline ${s.deadlineMs} ms, budget ${ms(d.budgetMs)}): ${d.mode.toUpperCase()} (${d.reason})\n` +
    `   because ${d.because}\n` +
    (s.attempts > 1 ? `   (the estimate moved while choosing the budget: attempt ${s.attempts})\n` : "") +
    `   $ tailswarm coordinate ${address} --task vote --payload '{"question":"${s.question}"}' --deadline-ms ${s.deadlineMs}\n`
  );
}

function runText(swarm: DemoSwarm, r: DemoRun): string {
  const addr = swarm.coordinator;
  const warm = r.warmup.last;
  const [speculate, synchronous, degrade] = r.steps;
  const peers = formatStatus(r.status, addr)
    .split("\n")
    .filter((l) => l.startsWith("  "))
    .map((l) => `   ${l}`)
    .join("\n");
  return (
    stepText(1, "Before any estimate, a generous budget", r.first, addr) +
    `   The rule never speculates on an unknown estimate. A peer's estimate is fresh once its window holds\n` +
    `   estimator.minSamples (${DEMO_ESTIMATOR.minSamples}) answers within estimator.windowMs (${DEMO_ESTIMATOR.windowMs / 1000} s; docs/configuration.md, "Sizing").\n\n` +
    `2. Warm-up: ${r.warmup.fanouts} fan-outs in ${r.warmup.seconds.toFixed(1)} s; the coordinator's view ('tailswarm status ${addr}'):\n` +
    `${peers}\n` +
    `   Fan-out p50 ${ms(warm.fanoutP50Ms)}, p99 ${ms(warm.fanoutP99Ms)} (all ${warm.size} peers are required, so the slowest sets both);\n` +
    `   the budget the coordinator decides on is the deadline minus about ${ms(r.overheadMs)} (its reserve and the transit).\n\n` +
    stepText(3, "A budget well above p99 + abandon cost", speculate!, addr) +
    stepText(4, "A budget between p50 and p99", synchronous!, addr) +
    stepText(5, "A budget below p50", degrade!, addr) +
    `\nThe coordinator's flight recorder on those three ('tailswarm decisions ${addr} --last 3'):\n\n` +
    formatDecisions([degrade!.decision, synchronous!.decision, speculate!.decision]) +
    "\n(with --keep the swarm stays up to run these commands; each step's budget follows the estimate,\n" +
    "so the same deadlines can decide otherwise on another machine or a minute later)\n\n"
  );
}

function keepText(swarm: DemoSwarm): string {
  const a = swarm.coordinator;
  return (
    `The swarm keeps running; Ctrl-C stops it. Try:\n` +
    `  tailswarm status ${a}\n` +
    `  tailswarm coordinate ${a} --task vote --payload '{"question":"deploy?"}' --deadline-ms 400\n` +
    `  tailswarm decisions ${a} --last 5\n` +
    `(estimates go stale after estimator.windowMs without fan-outs; then the rule is synchronous again)\n`
  );
}

function jsonOf(swarm: DemoSwarm, r: DemoRun, started: number): Record<string, unknown> {
  const step = (s: DemoStep) => ({
    target: s.target,
    budgetChoice: s.budgetChoice,
    deadlineMs: s.deadlineMs,
    attempts: s.attempts,
    answer: s.answer,
    decision: s.decision,
  });
  return {
    swarm: { coordinator: swarm.coordinator, peers: swarm.peers, pid: swarm.process.pid },
    first: step(r.first),
    warmup: {
      fanouts: r.warmup.fanouts,
      seconds: r.warmup.seconds,
      last: r.warmup.last,
      overheadMs: r.overheadMs,
    },
    steps: r.steps.map(step),
    elapsedS: Number(((Date.now() - started) / 1000).toFixed(1)),
  };
}
