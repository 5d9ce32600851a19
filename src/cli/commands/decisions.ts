/**
 * `tailswarm decisions <addr>` — the node's flight recorder: its last fan-out decisions with the
 * reasons (mode, the inequality that decided it, the numbers), what happened to the branches and the
 * trace id, without a tracing backend.
 *
 *   tailswarm decisions 127.0.0.1:7000 --last 5
 *   tailswarm decisions 127.0.0.1:7000 --json     # {"nodeId", "capacity", "recorded", "decisions": [...]}
 *
 * Exit codes: 0 printed; 1 the node could not be asked (unreachable, no Decisions service); 2 usage.
 */
import { TailswarmError, expectation } from "../../errors.js";
import { fetchDecisions } from "../../telemetry/decisions-service.js";
import { formatDecisions } from "../../telemetry/format-decisions.js";
import { EXIT, formatHelp, numberFlag, parseFlags, UsageError } from "../args.js";

const FLAGS = {
  last: {
    type: "string",
    valueName: "N",
    description: "how many decisions, newest first (default: all kept)",
  },
  json: { type: "boolean", description: "print one JSON object with the decisions" },
  "timeout-ms": { type: "string", valueName: "MS", description: "give up after this long (default 5000)" },
} as const;

const USAGE = "tailswarm decisions <host:port> [--last N] [--json]";
const DESCRIPTION =
  "Print the last fan-out decisions a node made, with their reasons: why each speculated, went\n" +
  "synchronous or degraded, and what happened to its branches.";

/** The verb's entry point; returns the exit code. */
export async function run(argv: string[]): Promise<number> {
  let address: string;
  let last: number | undefined;
  let timeout: number;
  let json: boolean;
  try {
    const { values, positionals, help } = parseFlags(argv, FLAGS, { positionals: true });
    if (help) {
      process.stdout.write(formatHelp(USAGE, DESCRIPTION, FLAGS));
      return EXIT.ok;
    }
    if (positionals.length !== 1) {
      throw new UsageError(expectation("arguments", positionals, "one node address (host:port)"));
    }
    address = positionals[0]!;
    last = numberFlag(values, "last", { min: 1 });
    if (last !== undefined && !Number.isInteger(last)) {
      throw new UsageError(expectation("--last", last, "an integer >= 1"));
    }
    timeout = numberFlag(values, "timeout-ms", { min: 1 }) ?? 5_000;
    json = values.json === true;
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`tailswarm decisions: ${error.message}\n\nusage: ${USAGE}\n`);
      return EXIT.usage;
    }
    throw error;
  }
  try {
    const reply = await fetchDecisions(address, { last, deadlineMs: timeout });
    if (json) process.stdout.write(`${JSON.stringify(reply)}\n`);
    else {
      process.stdout.write(
        `node ${reply.nodeId || address}: ${reply.decisions.length} of ${reply.recorded} decisions (keeps ${reply.capacity})\n\n`,
      );
      process.stdout.write(formatDecisions(reply.decisions));
    }
    return EXIT.ok;
  } catch (error) {
    const e = error as { code?: unknown; details?: unknown; message?: unknown };
    const why = typeof e.details === "string" && e.details !== "" ? e.details : String(e.message ?? error);
    const err = new TailswarmError("PEER_UNAVAILABLE", `could not read decisions from ${address}: ${why}`, {
      cause: error,
    });
    process.stderr.write(`tailswarm decisions: ${err.code}: ${err.message}\n`);
    return EXIT.failure;
  }
}
