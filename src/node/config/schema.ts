/**
 * Every node config key in one table: its type, default, environment variable, flag and doc line.
 * The loader, the validator, `tailswarm node --help` and docs/configuration.md all follow it.
 * Env names are `TAILSWARM_` + the dotted path in SCREAMING_SNAKE (`probe.intervalMs` →
 * `TAILSWARM_PROBE_INTERVAL_MS`); flags are the path in kebab case (`--probe-interval-ms`).
 */
import { hostname } from "node:os";
import { nanoid } from "nanoid";
import { bool, hostPort, int, listOf, num, oneOf, text } from "./field-types.js";
import type { FieldType } from "./field-types.js";
import { handlersField } from "./handlers-field.js";
import { primitivesField } from "./primitives-field.js";
import { ROUTING_POLICIES } from "../../routing/router.js";
import { POLICY_NAMES } from "../../policy/types.js";

export interface FieldSpec {
  /** Dotted path in the config object. */
  readonly path: string;
  readonly type: FieldType<unknown>;
  /** Default value (a function for computed ones); undefined means optional and absent. */
  readonly default?: unknown;
  readonly doc: string;
}

const field = <T>(
  path: string,
  type: FieldType<T>,
  dflt: T | (() => T) | undefined,
  doc: string,
): FieldSpec => ({
  path,
  type: type,
  ...(dflt !== undefined && { default: dflt }),
  doc,
});

const ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;
const idText = "1-128 characters: letters, digits, . _ : - (starting with a letter or digit)";

function defaultNodeId(): string {
  const host =
    hostname()
      .replace(/[^A-Za-z0-9._-]/g, "-")
      .slice(0, 100) || "node";
  return `${host}-${nanoid(6).replace(/[^A-Za-z0-9]/g, "x")}`;
}

export const configFields: readonly FieldSpec[] = [
  field(
    "nodeId",
    text(idText, ID),
    defaultNodeId,
    "Node identity, unique in the swarm (default: hostname-random).",
  ),
  field("region", text(idText, ID), "default", "Region label; peers learn it through State."),
  field(
    "listen",
    hostPort(true),
    "127.0.0.1:7400",
    "Address of the one gRPC port; port 0 picks a free port.",
  ),
  field("peers", listOf(hostPort(false)), [], "Static seed peers (host:port)."),
  field(
    "dns",
    listOf(hostPort(false)),
    [],
    "DNS names (host:port); each A/AAAA record is a peer (headless service).",
  ),
  field("dnsIntervalMs", int(100), 5_000, "How often DNS names are re-resolved, ms."),
  field(
    "fanoutRegions",
    listOf(text(idText, ID)),
    [],
    "Regions whose peers this node's fan-outs may go to (peers tell their region through State); empty: every region. While set, a peer whose region is not known yet gets no branch.",
  ),
  field("probe.intervalMs", int(10), 1_000, "Probe period per peer, ms."),
  field("probe.timeoutMs", int(1), 500, "Deadline of one probe, ms."),
  field("probe.failureThreshold", int(1, 100), 3, "Consecutive failed probes that mark a peer down."),
  field(
    "handlers",
    handlersField,
    () => [
      { kind: "echo", use: "echo" },
      { kind: "vote", use: "vote" },
    ],
    "Task kinds served and what serves them (see peers/README.md).",
  ),
  field("concurrency", int(1, 100_000), 64, "Handler executions running at once."),
  field(
    "queueLimit",
    int(0, 1_000_000),
    1_024,
    "Branches waiting beyond `concurrency`; more are refused (RESOURCE_EXHAUSTED).",
  ),
  field(
    "maxPayloadBytes",
    int(1, 64 * 1024 * 1024),
    1_048_576,
    "Largest task payload or answer, bytes (JSON).",
  ),
  field("deadlineReserveMs", num(0, 10_000), 5, "Kept back from an incoming deadline to reply in time, ms."),
  field(
    "defaultBudgetMs",
    num(1, 3_600_000),
    1_000,
    "Budget of a Coordinate call with no deadline and no budget_ms, ms.",
  ),
  field(
    "estimator.windowMs",
    int(100, 3_600_000),
    10_000,
    "Latency window per peer, ms (shorter than the tail's correlation time).",
  ),
  field(
    "estimator.slices",
    int(1, 64),
    6,
    "Sub-windows in the ring; staleness <= windowMs * (1 + 1/slices).",
  ),
  field(
    "estimator.minSamples",
    int(1, 1_000_000),
    20,
    "Fewer samples in the window makes an estimate unknown.",
  ),
  field(
    "estimator.observedFanoutSets",
    int(0, 4096),
    64,
    "Required peer sets whose own fan-out completion times are observed (they see correlated tails); 0 turns this off.",
  ),
  field(
    "estimator.observedMinSamples",
    int(1, 1_000_000),
    10,
    "Fan-outs to a set in the window before its observed completion times give the fan-out p50.",
  ),
  field("policy", oneOf(POLICY_NAMES), "p99-boundary", "Default speculation policy."),
  field(
    "routing.policy",
    oneOf(["none", ...ROUTING_POLICIES] as const),
    "none",
    "Which peers a fan-out goes to: none (every live peer) or a routing policy picking routing.k of them (mabp: memory-augmented backpressure; docs/routing.md).",
  ),
  field("routing.k", int(0, 100_000), 0, "Peers a routing policy picks per fan-out; 0 means all live peers."),
  field("routing.nu", num(0, 1_000_000), 5, "Penalty weight ν of MABP and cost-BP."),
  field(
    "routing.reservationTtlMs",
    int(0, 3_600_000),
    500,
    "How long a routed branch counts in the peer's queue before its state says so, ms; 0 disables reservations.",
  ),
  field(
    "routing.staleMs",
    int(1, 3_600_000),
    2_000,
    "A peer's advertised routing state older than this loses its memory claims (and is polled), ms.",
  ),
  field(
    "routing.primitives",
    primitivesField,
    undefined,
    "Primitives w, p, P per queue key for mabp and cost-bp (config file only); given, the node uses them and learns nothing (docs/routing.md).",
  ),
  field("abandonCostPriorMs", num(0, 60_000), 1, "Abandon cost assumed before the ledger has data, ms."),
  field(
    "drainGraceMs",
    int(0, 3_600_000),
    5_000,
    "On SIGTERM/SIGINT, time in-flight work gets to finish before it is cancelled, ms.",
  ),
  field(
    "tls.ca",
    text("a file path"),
    undefined,
    "PEM CA bundle; verifies peers' servers and, with requireClientCert, clients.",
  ),
  field(
    "tls.cert",
    text("a file path"),
    undefined,
    "PEM certificate of this node (served, and presented to peers).",
  ),
  field("tls.key", text("a file path"), undefined, "PEM private key of tls.cert."),
  field(
    "tls.requireClientCert",
    bool,
    false,
    "Mutual TLS: refuse callers without a certificate signed by tls.ca.",
  ),
  field(
    "tls.serverName",
    text("a DNS name"),
    undefined,
    "Name peers' certificates are checked against instead of the address dialed (under DNS discovery that is a pod IP); default: the address.",
  ),
  field(
    "tls.reloadIntervalMs",
    int(0, 3_600_000),
    30_000,
    "How often the tls.* files are re-read; a changed, valid set serves new connections without a restart, an invalid one is refused (logged) and the old set kept. 0 turns reloading off, ms.",
  ),
  field(
    "metrics.prometheusPort",
    int(0, 65_535),
    0,
    "Prometheus scrape port on the listen host; 0 disables it.",
  ),
  field(
    "telemetry.contextManager",
    oneOf(["async-hooks", "sync"] as const),
    "sync",
    "How trace context follows async work: sync (within synchronous calls only, no async hooks; tailswarm's own traces across hops need no more) or async-hooks (AsyncLocalStorage, across every await, for handlers whose instrumented libraries run after an await; ≈ 9% of gRPC fan-out throughput; docs/telemetry.md).",
  ),
  field(
    "telemetry.tracesPerSecond",
    num(0),
    10,
    "New traces per second the default sampler starts (a call from a sampled caller is always traced; every trace below this rate). Ignored when OTEL_TRACES_SAMPLER is set; parentbased_always_on traces every fan-out (docs/telemetry.md).",
  ),
  field(
    "logLevel",
    oneOf(["debug", "info", "warn", "error", "silent"] as const),
    "info",
    "Lowest level written to stderr.",
  ),
];

/** `probe.intervalMs` → `TAILSWARM_PROBE_INTERVAL_MS`. */
export function envName(path: string): string {
  return `TAILSWARM_${path
    .split(".")
    .map((p) => p.replace(/([a-z0-9])([A-Z])/g, "$1_$2").toUpperCase())
    .join("_")}`;
}

/** `probe.intervalMs` → `probe-interval-ms` (the flag without its dashes). */
export function flagName(path: string): string {
  return path
    .split(".")
    .map((p) => p.replace(/([a-z0-9])([A-Z])/g, "$1-$2").toLowerCase())
    .join("-");
}

/** Environment variables the node reads that are not config keys. */
export const extraEnv: Readonly<Record<string, string>> = {
  TAILSWARM_CONFIG: "Path of a JSON or YAML config file (same as --config).",
  TAILSWARM_TRACE:
    "Comma list of modules to trace at debug level (node, mesh, engine, membership, config; `all`).",
};

/** Groups of keys (objects) in the config; every other top-level key is a leaf. */
export function groupsOf(fields: readonly FieldSpec[]): Map<string, string[]> {
  const groups = new Map<string, string[]>();
  for (const f of fields) {
    const dot = f.path.indexOf(".");
    const group = dot < 0 ? "" : f.path.slice(0, dot);
    const key = dot < 0 ? f.path : f.path.slice(dot + 1);
    groups.set(group, [...(groups.get(group) ?? []), key]);
    if (group !== "" && !(groups.get("") ?? []).includes(group))
      groups.set("", [...(groups.get("") ?? []), group]);
  }
  return groups;
}
