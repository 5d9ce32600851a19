/** The node's configuration, fully resolved (defaults applied, validated). */
import type { PolicyName } from "../../policy/types.js";
import type { PrimitivesConfig } from "../../routing/configured-primitives.js";
import type { RoutingPolicyName } from "../../routing/types.js";

export type LogLevel = "debug" | "info" | "warn" | "error" | "silent";

export interface HandlerEntry {
  /** Task kind served. */
  readonly kind: string;
  /** Shipped handler name (`echo`, `vote`, `synthetic`) or an ESM module path. */
  readonly use: string;
  readonly options?: unknown;
}

export interface TlsConfig {
  /** PEM file of the CA that signs peers' and clients' certificates. */
  readonly ca?: string;
  /** PEM files of this node's certificate and key (server and client side). */
  readonly cert?: string;
  readonly key?: string;
  /** Refuse clients (and peers) that do not present a certificate signed by `ca`. */
  readonly requireClientCert: boolean;
  /** Name checked in peers' certificates instead of the dialed address (a pod IP under DNS discovery). */
  readonly serverName?: string;
  /** How often the files are re-read for a rotation, ms; 0: never. */
  readonly reloadIntervalMs: number;
}

export interface NodeConfig {
  readonly nodeId: string;
  readonly region: string;
  /** host:port of the one gRPC port (port 0 picks a free one). */
  readonly listen: string;
  /** Static seed peers, host:port. */
  readonly peers: readonly string[];
  /** DNS names (host:port) whose A/AAAA records are peers, e.g. a Kubernetes headless service. */
  readonly dns: readonly string[];
  readonly dnsIntervalMs: number;
  /** Regions whose peers fan-outs may go to; empty: every region. */
  readonly fanoutRegions: readonly string[];
  readonly probe: {
    readonly intervalMs: number;
    readonly timeoutMs: number;
    readonly failureThreshold: number;
  };
  readonly handlers: readonly HandlerEntry[];
  readonly concurrency: number;
  readonly queueLimit: number;
  readonly maxPayloadBytes: number;
  readonly deadlineReserveMs: number;
  /** Budget for a Coordinate call that carries neither a gRPC deadline nor budget_ms. */
  readonly defaultBudgetMs: number;
  readonly estimator: {
    readonly windowMs: number;
    readonly slices: number;
    readonly minSamples: number;
    readonly observedFanoutSets: number;
    readonly observedMinSamples: number;
  };
  readonly policy: PolicyName;
  /** Peer selection per fan-out (src/routing); `none` fans out to every live peer. */
  readonly routing: {
    readonly policy: RoutingPolicyName | "none";
    readonly k: number;
    readonly nu: number;
    readonly reservationTtlMs: number;
    readonly staleMs: number;
    /** Primitives `w, p, P` for mabp / cost-bp, from the config file; absent: mabp and cost-bp learn them. */
    readonly primitives?: PrimitivesConfig;
  };
  readonly abandonCostPriorMs: number;
  readonly drainGraceMs: number;
  readonly tls: TlsConfig;
  readonly metrics: { readonly prometheusPort: number };
  /** The OpenTelemetry SDK's context manager and default sampler rate when telemetry is on (docs/telemetry.md). */
  readonly telemetry: { readonly contextManager: "async-hooks" | "sync"; readonly tracesPerSecond: number };
  readonly logLevel: LogLevel;
}
