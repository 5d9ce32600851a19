/**
 * `tailswarm status <addr> [--json]`: a node's identity and load, its coordinator's decisions by
 * mode, and its view of every peer (up/down, p50/p99, samples, estimate age).
 */
import type { StatusReply__Output } from "../../mesh/gen/tailswarm/v1/StatusReply.js";
import { EXIT, formatHelp, parseFlags } from "../args.js";
import { guard } from "../verb-errors.js";
import { askNode, nodeAddress, timeoutFlag, tlsFlags } from "./client-flags.js";

const spec = {
  json: { type: "boolean", description: "print the status as one JSON object" },
  ...timeoutFlag,
  ...tlsFlags,
} as const;

const ms = (v: number): string => (Number.isFinite(v) ? v.toFixed(1) : "-");

/** Each policy's own ledger, when calls named policies other than the node's default. */
function byPolicy(s: StatusReply__Output): string {
  const others = Object.entries(s.abandonCostMsByPolicy ?? {}).filter(([p]) => p !== s.policy);
  if (others.length === 0) return "";
  return ` (${s.policy}'s ledger; ${others.map(([p, v]) => `${p} ${ms(v)}`).join(", ")} ms)`;
}

export function formatStatus(s: StatusReply__Output, address: string): string {
  const d = s.decisions ?? { speculate: 0, synchronous: 0, degrade: 0 };
  const lines = [
    `node ${s.nodeId} at ${address}  region ${s.region || "-"}  up ${(s.uptimeMs / 1000).toFixed(1)} s` +
      `${s.draining ? "  DRAINING" : ""}  policy ${s.policy}  kinds ${s.kinds.join(",") || "-"}`,
    `load: in-flight ${s.inFlight}/${s.capacity}  queued ${s.queueDepth}  coordinating ${s.coordinating}` +
      `  event-loop delay p50 ${ms(s.eventLoopDelayP50Ms)} p99 ${ms(s.eventLoopDelayP99Ms)} max ${ms(s.eventLoopDelayMaxMs)} ms`,
    `decisions: ${s.fanouts} fan-outs  speculate ${d.speculate}  synchronous ${d.synchronous}  degrade ${d.degrade}` +
      `  violations ${s.violations}  abandon cost ${ms(s.abandonCostMs)} ms${byPolicy(s)}`,
  ];
  if (s.peers.length === 0) {
    lines.push("peers: none");
    return `${lines.join("\n")}\n`;
  }
  const header = [
    "PEER",
    "ADDRESS",
    "REGION",
    "STATE",
    "P50_MS",
    "P99_MS",
    "SAMPLES",
    "IN_FLIGHT",
    "AGE_MS",
    "ESTIMATE",
    "RESTARTS",
  ];
  const rows = s.peers.map((p) => [
    p.peerId || "?",
    p.address,
    p.region || "-",
    p.up ? "up" : "down",
    bounded(p.p50Ms, p.p50Kind),
    bounded(p.p99Ms, p.p99Kind),
    String(p.samples),
    String(p.censored),
    p.estimateAgeMs < 0 ? "-" : p.estimateAgeMs.toFixed(0),
    p.estimateStatus === "fresh" ? "fresh" : `unknown(${p.unknownReason || "?"})`,
    String(p.restarts),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const fmt = (r: readonly string[]): string =>
    `  ${r.map((c, i) => c.padEnd(widths[i]!)).join("  ")}`.trimEnd();
  lines.push("peers:", fmt(header), ...rows.map(fmt));
  return `${lines.join("\n")}\n`;
}

/** A lower-bound quantile reads `>=N`: the true value is at least that. */
function bounded(v: number, kind: string): string {
  return kind === "lower-bound" ? `>=${ms(v)}` : ms(v);
}

const USAGE =
  "tailswarm status <host:port> [--json] [--timeout-ms MS] [--tls-ca F --tls-cert F --tls-key F --tls-server-name NAME]";

export function run(argv: string[]): Promise<number> {
  return guard("status", async () => {
    const parsed = parseFlags(argv, spec, { positionals: true });
    if (parsed.help) {
      process.stdout.write(formatHelp(USAGE, "Show a node's peers, latency estimates and decisions.", spec));
      return EXIT.ok;
    }
    const address = nodeAddress(parsed.positionals);
    const s = await askNode("tailswarm.v1.NodeStatus", address, parsed.values, (client, timeoutMs) =>
      client.status(timeoutMs),
    );
    process.stdout.write(parsed.values.json ? `${JSON.stringify(s)}\n` : formatStatus(s, address));
    return EXIT.ok;
  });
}
