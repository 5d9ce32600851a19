/**
 * What the client verbs (`status`, `coordinate`, `decisions`) share: the node address argument, the
 * TLS flags, and the one account of a failed call — what went wrong in a line, what to do in a hint.
 */
import { NodeClient } from "../../node/client.js";
import type { ClientTls } from "../../node/client.js";
import { grpcStatusName } from "../../mesh/status.js";
import { expectation } from "../../errors.js";
import { EXIT, numberFlag, UsageError } from "../args.js";
import { CliError } from "../verb-errors.js";

/** What a read-only verb (`status`, `decisions`) waits for an answer by default, ms. */
const READ_TIMEOUT_MS = 5_000;

/** The deadline flag of the read-only verbs, read by `askNode`. */
export const timeoutFlag = {
  "timeout-ms": {
    type: "string",
    valueName: "MS",
    description: `deadline of the call (default ${READ_TIMEOUT_MS})`,
  },
} as const;

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

const ADDRESS_EXPECTED = "a node address: host:port (e.g. 127.0.0.1:7400), or a port for 127.0.0.1";
const PORT = /^:?(\d{1,5})$/;
const HOST_PORT = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9][A-Za-z0-9.-]*):(\d{1,5})$/;

/**
 * The one positional argument of a client verb as host:port. A bare port (`7400` or `:7400`) is
 * 127.0.0.1's, the address a node listens on by default.
 */
export function nodeAddress(positionals: readonly string[]): string {
  if (positionals.length !== 1) throw new UsageError(expectation("arguments", positionals, ADDRESS_EXPECTED));
  const arg = positionals[0]!;
  const bare = PORT.exec(arg);
  const hostPort = HOST_PORT.exec(arg);
  const port = Number(bare?.[1] ?? hostPort?.[2] ?? NaN);
  if (!(port >= 1 && port <= 65535)) throw new UsageError(expectation("address", arg, ADDRESS_EXPECTED));
  return bare === null ? arg : `127.0.0.1:${port}`;
}

/** The longest server text a failure repeats (the server's, so bounded like every echoed value). */
const MAX_DETAILS = 300;

function detailsOf(err: unknown): string {
  const e = err as { details?: unknown; message?: unknown };
  const raw = typeof e.details === "string" && e.details !== "" ? e.details : String(e.message ?? err);
  // grpc-js ends connection failures with "Resolution note: " and nothing after it.
  const text = raw.replace(/\.?\s*Resolution note:\s*$/, "").trim();
  return text.length > MAX_DETAILS ? `${text.slice(0, MAX_DETAILS)}… (${text.length} chars)` : text;
}

/** The gRPC status name of a failed call (`UNAVAILABLE`), `ERROR` for an error that is not a call's. */
export function statusOf(err: unknown): string {
  const code = (err as { code?: unknown }).code;
  return typeof code === "number" ? grpcStatusName(code) : "ERROR";
}

/** What the client verb was doing, for the messages. */
export interface CallContext {
  readonly address: string;
  /** The call's deadline, ms. */
  readonly timeoutMs: number;
  /** The TLS flags were given. */
  readonly tls: boolean;
  /** The service the verb calls, e.g. `tailswarm.v1.NodeStatus`. */
  readonly service: string;
  /** The flag that set the deadline, e.g. `--timeout-ms`. */
  readonly deadlineFlag: string;
  /** What to do when no answer came in time. */
  readonly slowHint: string;
}

/**
 * A failed call as one actionable error (exit 1): connection refused, an unresolvable host, a
 * server that is not a tailswarm node, TLS trouble, silence; otherwise the node's own status and words.
 */
export function callFailure(ctx: CallContext, err: unknown): CliError {
  const status = statusOf(err);
  const details = detailsOf(err);
  const { address } = ctx;
  const fail = (message: string, hint?: string): CliError =>
    new CliError(message, {
      exitCode: EXIT.failure,
      code: "PEER_UNAVAILABLE",
      cause: err,
      ...(hint !== undefined && { hint }),
    });
  const host = address.slice(0, address.lastIndexOf(":"));
  if (status === "UNAVAILABLE" && /ECONNREFUSED/.test(details)) {
    return fail(
      `no node is answering at ${address} (connection refused); is 'tailswarm node' running there?`,
      `start one with 'tailswarm node --listen ${address}', or give the address of a running node`,
    );
  }
  if (
    status === "UNAVAILABLE" &&
    /ENOTFOUND|EAI_AGAIN|Name resolution failed|DNS resolution failed/.test(details)
  ) {
    return fail(`cannot resolve ${host} (${address})`, "check the host name, or give an IP address");
  }
  if (status === "UNAVAILABLE" && /EHOSTUNREACH|ENETUNREACH|ETIMEDOUT/.test(details)) {
    return fail(`cannot reach ${address} (${/(EHOSTUNREACH|ENETUNREACH|ETIMEDOUT)/.exec(details)![1]})`);
  }
  if (/SSL|TLS|certificate|handshake|self[- ]signed|altnames/i.test(details)) {
    return fail(
      `TLS with ${address} failed: ${details}`,
      "check --tls-ca (the CA that signed the node's certificate) and --tls-server-name (the name it carries)",
    );
  }
  const protocol = /Protocol error|Connection dropped|EPROTO|socket hang up/i.exec(details);
  if (status === "UNAVAILABLE" && protocol !== null) {
    return fail(
      `${address} does not speak gRPC over HTTP/2 (${protocol[0]}): not a tailswarm node${ctx.tls ? "" : ", or one that serves TLS"}`,
      ctx.tls
        ? "give the node's gRPC port (its listen address), not a web or metrics port"
        : "give the node's gRPC port (its listen address); if the node serves TLS, give --tls-ca (and --tls-cert/--tls-key for mutual TLS)",
    );
  }
  const http = /Received HTTP status code (\d+)/.exec(details);
  if (http !== null) {
    return fail(
      `${address} answers HTTP (status ${http[1]}) but is not a tailswarm node`,
      "give the node's gRPC port (its listen address), not a web, metrics or proxy port",
    );
  }
  if (status === "UNIMPLEMENTED") {
    return fail(
      `${address} is a gRPC server without ${ctx.service}: not a tailswarm node, or one of another version`,
      "give the address of a tailswarm node ('tailswarm status <addr>' names the node that answers)",
    );
  }
  // The client's own deadline (grpc-js's words); a node's DEADLINE_EXCEEDED has its own.
  if (status === "DEADLINE_EXCEEDED" && /^Deadline exceeded after/.test(details)) {
    return fail(`no answer from ${address} within ${ctx.deadlineFlag} ${ctx.timeoutMs}`, ctx.slowHint);
  }
  return fail(`${address}: ${status}: ${details}`);
}

/**
 * A read-only verb's call to the node at `address`: `--timeout-ms` (default 5000) is the call's
 * deadline, the client is closed after it, and a failure becomes `callFailure`'s account of it.
 */
export async function askNode<T>(
  service: string,
  address: string,
  values: Parameters<typeof tlsFromFlags>[0] & { "timeout-ms"?: string },
  ask: (client: NodeClient, timeoutMs: number) => Promise<T>,
): Promise<T> {
  const timeoutMs = numberFlag(values, "timeout-ms", { min: 1 }) ?? READ_TIMEOUT_MS;
  const tls = tlsFromFlags(values);
  const client = new NodeClient(address, tls);
  try {
    return await ask(client, timeoutMs);
  } catch (err) {
    throw callFailure(
      {
        address,
        timeoutMs,
        tls: tls !== undefined,
        service,
        deadlineFlag: "--timeout-ms",
        slowHint:
          "check the address (a firewall that drops packets looks like this), or give more time with --timeout-ms",
      },
      err,
    );
  } finally {
    client.close();
  }
}
