/**
 * The HTTP/2 servers under a grpc-js server, for what grpc-js does not offer: connection limits
 * (connection-limits.ts), admission on headers (header-admission.ts) and a cap on incoming deadlines
 * (with the one parser of `grpc-timeout` both use). grpc-js keeps them in a private map
 * (`http2Servers`, 1.x); if a later version drops it, `http2ServersOf` throws rather than leaving the
 * node silently unguarded (a test starts a server and checks the guard is on).
 */
import type * as http2 from "node:http2";
import type * as grpc from "@grpc/grpc-js";
import { TailswarmError } from "../errors.js";

export type AnyHttp2Server = http2.Http2Server | http2.Http2SecureServer;

export function http2ServersOf(server: grpc.Server): AnyHttp2Server[] {
  const map = (server as unknown as { http2Servers?: unknown }).http2Servers;
  if (!(map instanceof Map)) {
    throw new TailswarmError(
      "INTERNAL",
      "grpc-js: its server no longer keeps `http2Servers`, expected the grpc-js 1.x layout (connection limits need it)",
    );
  }
  return [...(map.keys() as Iterable<AnyHttp2Server>)];
}

const UNIT_MS: Readonly<Record<string, number>> = {
  H: 3_600_000,
  M: 60_000,
  S: 1_000,
  m: 1,
  u: 1e-3,
  n: 1e-6,
};
const TIMEOUT = /^(\d{1,8})([HMSmun])$/;
/** What a `grpc-timeout` value must be (gRPC over HTTP/2: TimeoutValue TimeoutUnit). */
export const TIMEOUT_FORM = "1 to 8 digits and a unit (H, M, S, m, u or n), such as 250m";

/** `ms` as a `grpc-timeout` value (at most 8 digits: whole seconds beyond 99,999,999 ms). */
export function timeoutHeader(ms: number): string {
  return ms < 1e8 ? `${Math.floor(ms)}m` : `${Math.floor(ms / 1_000)}S`;
}

/**
 * A `grpc-timeout` header's value in ms: Infinity when absent, undefined when malformed (not
 * `TIMEOUT_FORM`, or given twice; the header gate refuses it).
 */
export function grpcTimeoutMs(raw: string | string[] | undefined): number | undefined {
  if (raw === undefined) return Infinity;
  const m = typeof raw === "string" ? TIMEOUT.exec(raw) : null;
  return m === null ? undefined : Number(m[1]) * (UNIT_MS[m[2] ?? "m"] ?? 1);
}

/**
 * Cuts every incoming `grpc-timeout` to `maxMs` before grpc-js reads it: grpc-js turns the timeout into
 * a 32-bit integer, so one beyond 2³¹ ms (~24.8 days) wraps negative and the call expires at once.
 * Runs ahead of grpc-js's own "stream" listener, on the same headers object.
 */
export function capIncomingDeadlines(h2: AnyHttp2Server, maxMs: number): void {
  h2.prependListener("stream", (_stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders) => {
    const ms = grpcTimeoutMs(headers["grpc-timeout"]);
    // absent, or malformed (the header gate refuses it)
    if (ms === undefined || ms === Infinity) return;
    if (ms > maxMs) headers["grpc-timeout"] = timeoutHeader(maxMs);
  });
}
