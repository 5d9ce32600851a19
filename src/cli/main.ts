#!/usr/bin/env node
/**
 * The `tailswarm` command. Each verb lives in src/cli/commands/<verb>.ts and exports
 * `run(argv: string[]): Promise<number>` (the exit code); verbs load lazily so that `explain`
 * never pays for gRPC or the OpenTelemetry SDK.
 */
type Verb = { summary: string; load: () => Promise<{ run(argv: string[]): Promise<number> }> };

const verbs: Record<string, Verb> = {
  // verbs register here, one line each
  testbed: {
    summary: "run the seed scenario as real processes and compare the policies",
    load: () => import("./commands/testbed.js"),
  },
  node: { summary: "run a swarm node (gRPC peer and coordinator)", load: () => import("./commands/node.js") },
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
  return `usage: tailswarm <verb> [options]\n\nverbs:\n${lines.join("\n")}\n\nRun 'tailswarm <verb> --help' for a verb's options.\n`;
}

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === "help" || name === "--help" || name === "-h") {
    process.stdout.write(usage());
    return name === undefined ? 2 : 0;
  }
  const verb = verbs[name];
  if (verb === undefined) {
    process.stderr.write(`tailswarm: unknown verb '${name}'\n\n${usage()}`);
    return 2;
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
    process.stderr.write(
      `tailswarm: ${typeof e.code === "string" ? `${e.code}: ` : ""}${String(e.message ?? err)}\n`,
    );
    process.exitCode = 1;
  },
);
