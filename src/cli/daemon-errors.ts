/**
 * What the daemon verbs (`node`, `host`) share about failing to start: a bind failure as one line
 * that says why and what to do, and grpc-js's own log lines routed into the node's log (so that a
 * port clash is not told three times, in three formats).
 */
import * as grpc from "@grpc/grpc-js";
import { format } from "node:util";
import { TailswarmError } from "../errors.js";
import type { Logger } from "../node/logger.js";
import { ExitCode } from "../node/exit-codes.js";
import { CliError } from "./verb-errors.js";

const BIND = /cannot bind (\S+)/;

const BIND_CAUSES: Record<string, { why: string; hint: (address: string, where: string) => string }> = {
  EADDRINUSE: {
    why: "the port is in use",
    hint: (address, where) =>
      `another process listens there ('tailswarm status ${address}' says whether it is a node); choose another port (${where})`,
  },
  EACCES: {
    why: "permission denied",
    hint: (_address, where) => `ports below 1024 need privileges; choose a port above 1023 (${where})`,
  },
  EADDRNOTAVAIL: {
    why: "the address is not one of this machine's",
    hint: (_address, where) => `listen on 127.0.0.1, 0.0.0.0 or an address of this machine (${where})`,
  },
};

/**
 * A node that did not start, as the verb's error: a bind failure exits 1 (the config is fine, the
 * machine is not), any other bad configuration 78, anything else 1. `where` says where the listen
 * address comes from (e.g. "--listen, TAILSWARM_LISTEN or listen: in the config file").
 */
export function startFailure(err: unknown, where: string, prefix = ""): CliError {
  const message = (err as Error).message ?? String(err);
  const bind = BIND.exec(message);
  if (TailswarmError.is(err, "INVALID_CONFIG") && bind !== null) {
    const address = bind[1]!;
    const cause = Object.keys(BIND_CAUSES).find((code) => message.includes(code));
    const known = cause === undefined ? undefined : BIND_CAUSES[cause];
    return new CliError(
      `${prefix}listen: cannot bind ${address}: ${known?.why ?? message.slice(message.indexOf("(") + 1, -1)}`,
      {
        exitCode: ExitCode.FAILURE,
        code: "INVALID_CONFIG",
        cause: err,
        ...(known !== undefined && { hint: known.hint(address, where) }),
      },
    );
  }
  return new CliError(`${prefix}${message}`, {
    exitCode: TailswarmError.is(err, "INVALID_CONFIG") ? ExitCode.CONFIG : ExitCode.FAILURE,
    cause: err,
  });
}

/**
 * grpc-js logs to stderr on its own (`E No address added out of total 1 resolved` before a bind
 * fails). Unless GRPC_VERBOSITY or GRPC_NODE_VERBOSITY asks for grpc-js's own output, its lines go to
 * the node's log as module `grpc`: its errors (all it writes by default) as warnings, except the bind
 * failure, which the verb reports itself.
 */
export function routeGrpcLog(log: Logger, env: NodeJS.ProcessEnv = process.env): void {
  if (env.GRPC_VERBOSITY !== undefined || env.GRPC_NODE_VERBOSITY !== undefined) return;
  const grpcLog = log.child("grpc");
  const text = (message: unknown, params: unknown[]): string => format(message, ...params);
  grpc.setLogger({
    error: (message?: unknown, ...params: unknown[]) => {
      const line = text(message, params);
      if (line.startsWith("No address added")) grpcLog.debug(line);
      else grpcLog.warn(line);
    },
  });
}
