/**
 * The node's authorization set-up from `authorization.*` (policy semantics: src/mesh/authz.ts): the
 * `authorize` hook for its server, refusals logged at most once a second (with a count of the rest),
 * and the start-up line that says how open the node is.
 */
import { TailswarmError } from "../errors.js";
import { makeAuthorizer } from "../mesh/authz.js";
import { LimitLog } from "../mesh/limit-log.js";
import type { Authorize } from "../mesh/rpc-guard.js";
import type { NodeConfig } from "./config/types.js";
import type { Logger } from "./logger.js";

/** undefined: every caller may call every RPC (and the log says so); throws INVALID_CONFIG on a policy without mTLS. */
export function nodeAuthorizer(config: NodeConfig, tlsOn: boolean, log: Logger): Authorize | undefined {
  const { peers, clients, operators } = config.authorization;
  const on = peers.length + clients.length + operators.length > 0;
  if (on && !config.tls.requireClientCert) {
    throw new TailswarmError(
      "INVALID_CONFIG",
      "authorization: got a policy without tls.requireClientCert, expected mutual TLS (identities come from client certificates)",
    );
  }
  if (!tlsOn) {
    log.warn("unauthenticated: TLS is off, any caller that reaches the listen address may call every RPC", {
      listen: config.listen,
    });
    return undefined;
  }
  if (!on) {
    log.warn("no authorization policy: any caller with a certificate of tls.ca may call every RPC", {
      requireClientCert: config.tls.requireClientCert,
    });
    return undefined;
  }
  const denials = new LimitLog((limit, fields) => log.warn("permission denied", { limit, ...fields }));
  return makeAuthorizer(config.authorization, (fields) => denials.report("authorization", fields));
}
