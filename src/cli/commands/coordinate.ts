/**
 * `tailswarm coordinate <addr> --task KIND [--payload JSON] --deadline-ms N [--json]`: ask a node to
 * decide a task within a deadline (the gRPC deadline of the call is the node's budget).
 */
import { expectation } from "../../errors.js";
import { NodeClient } from "../../node/client.js";
import type { CoordinateAnswer } from "../../node/client.js";
import { POLICY_NAMES } from "../../policy/types.js";
import { EXIT, formatHelp, numberFlag, parseFlags, UsageError } from "../args.js";
import { rpcFailure, tlsFlags, tlsFromFlags } from "./client-flags.js";

const spec = {
  task: { type: "string", valueName: "KIND", description: "task kind (e.g. vote, echo)" },
  payload: { type: "string", valueName: "JSON", description: "task payload as JSON (default null)" },
  "deadline-ms": {
    type: "string",
    valueName: "MS",
    description: "deadline of the call = the node's budget (required)",
  },
  required: { type: "string", valueName: "K", description: "answers required: any K peers (default all)" },
  policy: {
    type: "string",
    valueName: "NAME",
    description: POLICY_NAMES.join(" | "),
  },
  decision: {
    type: "string",
    valueName: "NAME",
    description:
      "decision model: quorum-vote | argmax-scores | context-result (default: context-result for kind context, else quorum-vote)",
  },
  options: { type: "string", valueName: "JSON", description: "decision model options as JSON" },
  json: { type: "boolean", description: "print the reply as one JSON object" },
  ...tlsFlags,
} as const;

function json(flag: string, text: string | undefined): unknown {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new UsageError(expectation(`--${flag}`, text, `JSON (${(err as Error).message})`));
  }
}

const ms = (v: number): string => (Number.isFinite(v) ? v.toFixed(1) : "-");

export function formatCoordinate(r: CoordinateAnswer): string {
  return (
    `action: ${JSON.stringify(r.action)}\n` +
    `mode: ${r.mode} (${r.reason})${r.violation ? `  violation ${r.violation}` : ""}\n` +
    `fan-out p50 ${ms(r.fanoutP50Ms)} ms  p99 ${ms(r.fanoutP99Ms)} ms  elapsed ${ms(r.elapsedMs)} ms\n` +
    `branches: committed ${r.committed}  abandoned ${r.abandoned}  late ${r.late}  failed ${r.failed}` +
    `  abandon cost ${ms(r.abandonCostMs)} ms  decision changed ${r.decisionChanged ? "yes" : "no"}\n` +
    `node ${r.nodeId}  fan-out ${r.fanoutId || "-"}\n`
  );
}

export async function run(argv: string[]): Promise<number> {
  const usage = "tailswarm coordinate <host:port> --task KIND [--payload JSON] --deadline-ms MS [--json]";
  let address: string;
  let deadlineMs: number;
  let call: Parameters<NodeClient["coordinate"]>[0];
  let parsed;
  try {
    parsed = parseFlags(argv, spec, { positionals: true });
    if (parsed.help) {
      process.stdout.write(formatHelp(usage, "Ask a node to decide a task within a deadline.", spec));
      return EXIT.ok;
    }
    if (parsed.positionals.length !== 1) {
      throw new UsageError(expectation("arguments", parsed.positionals, "one node address (host:port)"));
    }
    address = parsed.positionals[0]!;
    const v = parsed.values;
    if (v.task === undefined) throw new UsageError("missing required flag --task");
    deadlineMs = numberFlag(v, "deadline-ms", { required: true, min: 1 });
    const required = numberFlag(v, "required", { min: 0 });
    if (required !== undefined && !Number.isInteger(required)) {
      throw new UsageError(expectation("--required", required, "an integer >= 0"));
    }
    call = {
      kind: v.task,
      payload: json("payload", v.payload),
      ...(required !== undefined && { required }),
      ...(v.policy !== undefined && { policy: v.policy }),
      ...(v.decision !== undefined && { decision: v.decision }),
      ...(v.options !== undefined && { options: json("options", v.options) }),
    };
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`tailswarm coordinate: ${err.message}\n`);
    return EXIT.usage;
  }
  const client = new NodeClient(address, tlsFromFlags(parsed.values));
  try {
    const r = await client.coordinate(call, deadlineMs);
    process.stdout.write(parsed.values.json ? `${JSON.stringify(r)}\n` : formatCoordinate(r));
    return EXIT.ok;
  } catch (err) {
    return rpcFailure("coordinate", address, err);
  } finally {
    client.close();
  }
}
