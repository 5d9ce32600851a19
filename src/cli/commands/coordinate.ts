/**
 * `tailswarm coordinate <addr> --task KIND [--payload JSON] --deadline-ms N [--json]`: ask a node to
 * decide a task within a deadline (the gRPC deadline of the call is the node's budget).
 */
import { expectation } from "../../errors.js";
import { NodeClient } from "../../node/client.js";
import type { CoordinateAnswer } from "../../node/client.js";
import { DECISION_MODELS } from "../../node/decision-model.js";
import { POLICY_NAMES } from "../../policy/types.js";
import { EXIT, formatHelp, numberFlag, oneOf, parseFlags, UsageError } from "../args.js";
import { CliError, guard } from "../verb-errors.js";
import { callFailure, nodeAddress, statusOf, tlsFlags, tlsFromFlags } from "./client-flags.js";

/** How long the verb waits for a connection before the deadline starts. */
const CONNECT_TIMEOUT_MS = 5_000;

const spec = {
  task: { type: "string", valueName: "KIND", description: "task kind (e.g. vote, echo)" },
  payload: {
    type: "string",
    valueName: "JSON",
    description: `task payload as JSON (default: none, the task gets null; vote needs '{"question":"..."}')`,
  },
  "deadline-ms": {
    type: "string",
    valueName: "MS",
    description: `deadline of the call = the node's budget, from a ready connection (required; up to ${CONNECT_TIMEOUT_MS / 1000} s to connect first)`,
  },
  required: { type: "string", valueName: "K", description: "answers required: any K peers (default all)" },
  policy: {
    type: "string",
    valueName: "NAME",
    description: `${POLICY_NAMES.join(" | ")} (default: the node's policy)`,
  },
  decision: {
    type: "string",
    valueName: "NAME",
    description:
      "decision model: quorum-vote | argmax-scores | context-result (default: context-result for kind context, else quorum-vote)",
  },
  options: { type: "string", valueName: "JSON", description: "decision model options as JSON" },
  json: {
    type: "boolean",
    description: "print the reply as one JSON object (its fields: docs/configuration.md, Client verbs)",
  },
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

const ms = (v: number | null): string => (v !== null && Number.isFinite(v) ? v.toFixed(1) : "-");
/** A quantile that is not known says what it is: a lower bound (the true one is at least it), or unknown. */
const kind = (k: string): string =>
  k === "lower-bound" ? " (lower bound)" : k === "unknown" ? " (unknown)" : "";
const horizon = (h: number | null): string => (h === null ? "" : `  horizon ${ms(h)} ms`);

export function formatCoordinate(r: CoordinateAnswer): string {
  return (
    `action: ${JSON.stringify(r.action)}\n` +
    `mode: ${r.mode} (${r.reason})${r.violation ? `  violation ${r.violation}` : ""}\n` +
    (r.noAnswer ? "no peer answered by the deadline: the action is the decision model's prior\n" : "") +
    `fan-out p50 ${ms(r.fanoutP50Ms)} ms${kind(r.fanoutP50Kind)}  p99 ${ms(r.fanoutP99Ms)} ms${kind(r.fanoutP99Kind)}${horizon(r.fanoutHorizonMs)}  elapsed ${ms(r.elapsedMs)} ms\n` +
    `branches: committed ${r.committed}  abandoned ${r.abandoned}  late ${r.late}  failed ${r.failed}` +
    `  abandon cost ${ms(r.abandonCostMs)} ms  decision changed ${r.decisionChanged ? "yes" : "no"}\n` +
    `node ${r.nodeId}  fan-out ${r.fanoutId || "-"}\n`
  );
}

const USAGE = "tailswarm coordinate <host:port> --task KIND [--payload JSON] --deadline-ms MS [--json]";

export function run(argv: string[]): Promise<number> {
  return guard("coordinate", async () => {
    const parsed = parseFlags(argv, spec, { positionals: true });
    if (parsed.help) {
      process.stdout.write(formatHelp(USAGE, "Ask a node to decide a task within a deadline.", spec));
      return EXIT.ok;
    }
    const address = nodeAddress(parsed.positionals);
    const v = parsed.values;
    if (v.task === undefined) throw new UsageError("missing required flag --task");
    const deadlineMs = numberFlag(v, "deadline-ms", { required: true, min: 1 });
    const required = numberFlag(v, "required", { min: 0 });
    if (required !== undefined && !Number.isInteger(required)) {
      throw new UsageError(expectation("--required", required, "an integer >= 0"));
    }
    const call: Parameters<NodeClient["coordinate"]>[0] = {
      kind: v.task,
      payload: json("payload", v.payload),
      ...(required !== undefined && { required }),
      ...(v.policy !== undefined && { policy: oneOf("--policy", v.policy, POLICY_NAMES) }),
      ...(v.decision !== undefined && { decision: oneOf("--decision", v.decision, DECISION_MODELS) }),
      ...(v.options !== undefined && { options: json("options", v.options) }),
    };
    const tls = tlsFromFlags(v);
    const client = new NodeClient(address, tls);
    try {
      await client.connect(CONNECT_TIMEOUT_MS);
      const r = await client.coordinate(call, deadlineMs);
      process.stdout.write(v.json ? `${JSON.stringify(r)}\n` : formatCoordinate(r));
      return EXIT.ok;
    } catch (err) {
      const failure = callFailure(
        {
          address,
          timeoutMs: deadlineMs,
          tls: tls !== undefined,
          service: "tailswarm.v1.Swarm",
          deadlineFlag: "--deadline-ms",
          slowHint: "the deadline is the node's whole budget, for the fan-out and its reply; give more",
        },
        err,
      );
      if (statusOf(err) === "INVALID_ARGUMENT" && v.payload === undefined) {
        throw new CliError(failure.message, {
          exitCode: failure.exitCode,
          hint: `--payload was not given, so the task was null; e.g. --payload '{"question":"deploy?"}' for vote`,
        });
      }
      throw failure;
    } finally {
      client.close();
    }
  });
}
