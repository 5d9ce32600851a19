/**
 * Membership sources, registered by URI scheme like grpc-js resolvers: a target such as
 * `dns:///swarm-headless.default.svc:7400` or `static:///10.0.0.1:7400,10.0.0.2:7400` (a bare
 * `host:port` is static) becomes a source that lists peer addresses.
 */
import { invalid } from "../../errors.js";

export interface MembershipSource {
  /** A label for messages and status (`dns:///name:port`). */
  readonly target: string;
  /** Current peer addresses (`host:port`). Rejecting keeps the previous list. */
  resolve(): Promise<string[]>;
  /** Re-resolve every this many ms; undefined resolves once (static lists). */
  readonly refreshMs?: number;
}

export interface ParsedTarget {
  readonly scheme: string;
  readonly authority: string;
  /** What follows `scheme://authority/` (`name:port`). */
  readonly path: string;
  readonly raw: string;
}

/**
 * Builds a source for a parsed target.
 *
 * @example
 * registerSource("k8s", (t) => ({
 *   target: t.raw,
 *   refreshMs: 5_000,
 *   resolve: () => listEndpoints(t.path), // your Kubernetes Endpoints lookup
 * }));
 */
export type SourceFactory = (target: ParsedTarget, options: { refreshMs: number }) => MembershipSource;

const registry = new Map<string, SourceFactory>();

export function registerSource(scheme: string, factory: SourceFactory): void {
  registry.set(scheme.toLowerCase(), factory);
}

export function registeredSchemes(): string[] {
  return [...registry.keys()].sort();
}

/** `scheme:///path`, `scheme://authority/path`, or a bare `host:port` (scheme "static"). */
export function parseTarget(raw: string): ParsedTarget {
  const m = /^([a-zA-Z][a-zA-Z0-9+.-]*):\/\/([^/]*)\/(.*)$/.exec(raw);
  if (m) return { scheme: m[1]!.toLowerCase(), authority: m[2]!, path: m[3]!, raw };
  return { scheme: "static", authority: "", path: raw, raw };
}

export function createSource(raw: string, options: { refreshMs: number }): MembershipSource {
  const target = parseTarget(raw);
  const factory = registry.get(target.scheme);
  if (factory === undefined) {
    throw invalid(
      "peers",
      raw,
      `a target with a scheme of ${registeredSchemes().join(", ")} (or a bare host:port), not ${target.scheme}`,
      { code: "INVALID_CONFIG" },
    );
  }
  return factory(target, options);
}

/** Splits `host:port` (IPv6 in brackets), checking the port. */
export function splitHostPort(hostPort: string, raw: string): { host: string; port: number } {
  const m = /^(\[[^\]]+\]|[^:]+):(\d+)$/.exec(hostPort.trim());
  const port = m ? Number(m[2]) : NaN;
  if (!m || !(port > 0 && port < 65536)) {
    throw invalid("peers", raw, `host:port with a port 1-65535 (${JSON.stringify(hostPort)} is not)`, {
      code: "INVALID_CONFIG",
    });
  }
  return { host: m[1]!, port };
}
