#!/usr/bin/env node
/**
 * The `tailswarm` command. Each verb lives in src/cli/commands/<verb>.ts and exports
 * `run(argv: string[]): Promise<number>` (the exit code); verbs load lazily so that `explain`
 * never pays for gRPC or the OpenTelemetry SDK. `--version` is answered here, for every verb.
 * Errors on stderr have one format (verb-errors.ts).
 */
import { suggestion } from "./args.js";
import { ensureV8Flags } from "./heap-flags.js";
import { guard, writeError } from "./verb-errors.js";
import { cliVersion } from "./version.js";

type Verb = {
  summary: string;
  load: () => Promise<{ run(argv: string[]): Promise<number> }>;
  /** Runs with the V8 heap flags of heap-flags.ts (a long-lived node under load). */
  heapFlags?: true;
};

const verbs: Record<string, Verb> = {
  // verbs register here, one line each
  demo: {
    summary: "see the rule work: a local swarm with one slow peer, three budgets, three modes (seconds)",
    load: () => import("./commands/demo.js"),
  },
  testbed: {
    summary: "run the founding note's scenario as real processes and compare the policies",
    load: () => import("./commands/testbed.js"),
  },
  node: {
    summary: "run a swarm node (gRPC peer and coordinator)",
    load: () => import("./commands/node.js"),
    heapFlags: true,
  },
  host: {
    summary: "run several swarm nodes in one process (testbeds, development)",
    load: () => import("./commands/host.js"),
  },
  status: {
    summary: "show a node's peers, estimates and decisions",
    load: () => import("./commands/status.js"),
  },
  coordinate: {
    summary: "ask a node to decide a task within a deadline",
    load: () => import("./commands/coordinate.js"),
  },
  decisions: {
    summary: "print a node's last fan-out decisions and why",
    load: () => import("./commands/decisions.js"),
  },
  sim: {
    summary: "reproduce the MABP paper's evaluation on the slotted simulator",
    load: () => import("./commands/sim.js"),
  },
  explain: {
    summary: "classify one fan-out: speculate, synchronous or degrade",
    load: () => import("./commands/explain.js"),
  },
  config: {
    summary: "print the JSON Schema of the node config or of a testbed scenario",
    load: () => import("./commands/config.js"),
  },
};

function usage(): string {
  const lines = Object.entries(verbs).map(([name, v]) => `  ${name.padEnd(12)} ${v.summary}`);
  return (
    `usage: tailswarm <verb> [options]\n\nverbs:\n${lines.join("\n")}\n\n` +
    `Run 'tailswarm <verb> --help' for a verb's options, 'tailswarm --version' for the version.\n`
  );
}

/** `--version` anywhere before a `--` (a flag's value never starts with `--`, args.ts). */
function wantsVersion(argv: readonly string[]): boolean {
  const end = argv.indexOf("--");
  return (end < 0 ? argv : argv.slice(0, end)).some((a) => a === "--version" || a === "-V");
}

let verbName: string | undefined;

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === "--version" || name === "-V" || (name !== undefined && name in verbs && wantsVersion(rest))) {
    process.stdout.write(`tailswarm ${cliVersion()}\n`);
    return 0;
  }
  if (name === undefined || name === "help" || name === "--help" || name === "-h") {
    process.stdout.write(usage());
    return name === undefined ? 2 : 0;
  }
  const verb = Object.hasOwn(verbs, name) ? verbs[name] : undefined;
  if (verb === undefined) {
    const near = suggestion(name, Object.keys(verbs));
    writeError(
      undefined,
      `unknown verb '${name}'${near}`,
      `the verbs are ${Object.keys(verbs).join(", ")}; run 'tailswarm --help' for what each does`,
    );
    return 2;
  }
  verbName = name;
  if (verb.heapFlags === true) {
    const code = await guard(name, async () => {
      ensureV8Flags();
      return 0;
    });
    if (code !== 0) return code;
  }
  const mod = await verb.load();
  return mod.run(rest);
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    const e = err as { code?: unknown; message?: unknown };
    writeError(verbName, `${typeof e.code === "string" ? `${e.code}: ` : ""}${String(e.message ?? err)}`);
    process.exitCode = 1;
  },
);
