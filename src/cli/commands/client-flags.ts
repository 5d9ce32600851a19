/** TLS flags and RPC error reporting shared by the client verbs (`status`, `coordinate`). */
import type { ClientTls } from "../../node/client.js";
import { grpcStatusName } from "../../mesh/status.js";
import { EXIT } from "../args.js";

export const tlsFlags = {
  "tls-ca": {
    type: "string",
    valueName: "FILE",
    description: "PEM CA that signed the node's certificate (enables TLS)",
  },
  "tls-cert": { type: "string", valueName: "FILE", description: "PEM client certificate (mutual TLS)" },
  "tls-key": { type: "string", valueName: "FILE", description: "PEM key of --tls-cert" },
  "tls-server-name": {
    type: "string",
    valueName: "NAME",
    description: "name the node's certificate must carry, when it is not the address (e.g. a pod IP)",
  },
} as const;

export function tlsFromFlags(values: {
  "tls-ca"?: string;
  "tls-cert"?: string;
  "tls-key"?: string;
  "tls-server-name"?: string;
}): ClientTls | undefined {
  if (values["tls-ca"] === undefined && values["tls-cert"] === undefined) return undefined;
  return {
    ...(values["tls-ca"] !== undefined && { ca: values["tls-ca"] }),
    ...(values["tls-cert"] !== undefined && { cert: values["tls-cert"] }),
    ...(values["tls-key"] !== undefined && { key: values["tls-key"] }),
    ...(values["tls-server-name"] !== undefined && { serverName: values["tls-server-name"] }),
  };
}

/** Prints `tailswarm <verb>: <STATUS>: <details>` and returns exit code 1. */
export function rpcFailure(verb: string, address: string, err: unknown): number {
  const e = err as { code?: unknown; details?: unknown; message?: unknown };
  const name = typeof e.code === "number" ? grpcStatusName(e.code) : "ERROR";
  const details = typeof e.details === "string" && e.details !== "" ? e.details : String(e.message ?? err);
  process.stderr.write(`tailswarm ${verb}: ${address}: ${name}: ${details}\n`);
  return EXIT.failure;
}
