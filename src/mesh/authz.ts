/**
 * Authorization by identity under mutual TLS. A caller's identities are the SANs of its certificate
 * (`URI:spiffe://…` and `DNS:…`); each RPC belongs to one role, and a call proceeds only when one of
 * the caller's identities matches a pattern of that role:
 *
 * - peers: Swarm Branch, Probe, State, Abandon, AbandonStream (what coordinators send each other);
 * - clients: Swarm Coordinate;
 * - operators: NodeStatus, Decisions and server reflection;
 * - health is open to every caller (probes).
 *
 * A pattern is an identity, or one with `*` standing for any run of characters but `/` and `.`
 * (`spiffe://swarm/peer/*`, `*.peers.example`). A Branch's `origin` must be one of the caller's node
 * ids: its DNS names and the last path segment of its SPIFFE IDs (so `spiffe://swarm/peer/n1` and
 * `DNS:n1` both speak for node n1). Refusals are PERMISSION_DENIED naming the identity (clipped) and
 * the RPC.
 */
import * as grpc from "@grpc/grpc-js";
import { clip } from "../errors.js";
import type { Authorize, CallInfo } from "./rpc-guard.js";

export type AuthzRole = "peers" | "clients" | "operators";
export type AuthzPolicy = Readonly<Record<AuthzRole, readonly string[]>>;

/** The role whose identities may call `path`; "open" for health; undefined for an unknown RPC. */
export function roleOf(path: string): AuthzRole | "open" | undefined {
  const [, service = "", method = ""] = path.split("/");
  if (service === "grpc.health.v1.Health") return "open";
  if (service === "tailswarm.v1.Swarm") return method === "Coordinate" ? "clients" : "peers";
  if (service === "tailswarm.v1.NodeStatus" || service === "tailswarm.v1.Decisions") return "operators";
  if (service.startsWith("grpc.reflection.")) return "operators";
  return undefined;
}

/** The SAN identities of a call's peer certificate, URIs first; none without mutual TLS. */
export function identitiesOf(call: Pick<grpc.ServerInterceptingCallInterface, "getAuthContext">): string[] {
  const san = call.getAuthContext().sslPeerCertificate?.subjectaltname;
  if (san === undefined || san === "") return [];
  const uris: string[] = [];
  const dns: string[] = [];
  for (const entry of san.split(/,\s*/)) {
    if (entry.startsWith("URI:")) uris.push(entry.slice(4));
    else if (entry.startsWith("DNS:")) dns.push(entry.slice(4));
  }
  return [...uris, ...dns];
}

/** The caller's identity as logs, refusals and the abandon registry name it ("" without a certificate). */
export function callerOf(call: Pick<grpc.ServerInterceptingCallInterface, "getAuthContext">): string {
  return identitiesOf(call)[0] ?? "";
}

/** The node ids an identity speaks for: a DNS name itself, a SPIFFE ID's last path segment. */
export function nodeIdOf(identity: string): string {
  if (!identity.startsWith("spiffe://")) return identity;
  return identity.slice(identity.lastIndexOf("/") + 1);
}

function compile(pattern: string): RegExp {
  const body = pattern
    .split("*")
    .map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
    .join("[^/.]*");
  return new RegExp(`^${body}$`);
}

/**
 * The `authorize` hook of the rpc guard for `policy`. `onDenied` hears of every refusal (the node
 * rate-limits it into the log).
 */
export function makeAuthorizer(
  policy: AuthzPolicy,
  onDenied?: (fields: { identity: string; rpc: string; reason: string }) => void,
): Authorize {
  const compiled = {
    peers: policy.peers.map(compile),
    clients: policy.clients.map(compile),
    operators: policy.operators.map(compile),
  };
  const deny = (identity: string, rpc: string, reason: string): ReturnType<Authorize> => {
    onDenied?.({ identity: clip(identity), rpc, reason });
    return {
      code: grpc.status.PERMISSION_DENIED,
      details: `${rpc}: identity ${identity === "" ? "(no certificate SAN)" : clip(identity)} ${reason}`,
    };
  };
  return ({ path, call, message }: CallInfo) => {
    const role = roleOf(path);
    if (role === "open") return undefined;
    const ids = identitiesOf(call);
    if (message === undefined) {
      if (role === undefined) return deny(ids[0] ?? "", path, "may not call an RPC outside the policy");
      if (!ids.some((id) => compiled[role].some((re) => re.test(id))))
        return deny(ids[0] ?? "", path, `is not among authorization.${role}`);
      return undefined;
    }
    if (path === "/tailswarm.v1.Swarm/Branch") {
      const origin = (message as { origin?: unknown }).origin;
      if (typeof origin !== "string" || !ids.some((id) => nodeIdOf(id) === origin))
        return deny(ids[0] ?? "", path, `may not send a branch with origin ${clip(String(origin))}`);
    }
    return undefined;
  };
}
