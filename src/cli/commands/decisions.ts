/**
 * `tailswarm decisions <addr>` — the node's flight recorder: its last fan-out decisions with the
 * reasons (mode, the inequality that decided it, the numbers), what happened to the branches and the
 * trace id, without a tracing backend.
 *
 *   tailswarm decisions 127.0.0.1:7000 --last 5
 *   tailswarm decisions 127.0.0.1:7000 --json     # {"nodeId", "capacity", "recorded", "decisions": [...]}
 *
 * Exit codes: 0 printed; 1 the node could not be asked (unreachable, not a node, silent); 2 usage.
 */
import { expectation } from "../../errors.js";
import { formatDecisions } from "../../telemetry/format-decisions.js";
import { EXIT, formatHelp, numberFlag, parseFlags, UsageError } from "../args.js";
import { guard } from "../verb-errors.js";
import { askNode, nodeAddress, timeoutFlag, tlsFlags } from "./client-flags.js";

const FLAGS = {
  last: {
    type: "string",
    valueName: "N",
    description: "how many decisions, newest first (default: all kept)",
  },
  json: { type: "boolean", description: "print one JSON object with the decisions" },
  ...timeoutFlag,
  ...tlsFlags,
} as const;

const USAGE = "tailswarm decisions <host:port> [--last N] [--json] [--timeout-ms MS] [--tls-ca F ...]";
const DESCRIPTION =
  "Print the last fan-out decisions a node made, with their reasons: why each speculated, went\n" +
  "synchronous or degraded (the inequality with the numbers it decided on), and what happened to its branches.";

/** The verb's entry point; returns the exit code. */
export function run(argv: string[]): Promise<number> {
  return guard("decisions", async () => {
    const { values, positionals, help } = parseFlags(argv, FLAGS, { positionals: true });
    if (help) {
      process.stdout.write(formatHelp(USAGE, DESCRIPTION, FLAGS));
      return EXIT.ok;
    }
    const address = nodeAddress(positionals);
    const last = numberFlag(values, "last", { min: 1 });
    if (last !== undefined && !Number.isInteger(last)) {
      throw new UsageError(expectation("--last", last, "an integer >= 1"));
    }
    const reply = await askNode("tailswarm.v1.Decisions", address, values, (client, timeoutMs) =>
      client.decisions(last, timeoutMs),
    );
    if (values.json === true) process.stdout.write(`${JSON.stringify(reply)}\n`);
    else {
      process.stdout.write(
        `node ${reply.nodeId || address}: ${reply.decisions.length} of ${reply.recorded} decisions (keeps ${reply.capacity})\n\n`,
      );
      process.stdout.write(formatDecisions(reply.decisions));
    }
    return EXIT.ok;
  });
}
