/**
 * Admission on a call's HTTP/2 headers, ahead of grpc-js: a call the node would refuse is answered
 * RESOURCE_EXHAUSTED (trailers only, with its retry hint) before grpc-js builds a call for it, so
 * under a flood a refusal costs an HTTP/2 stream and one HEADERS frame, no call object, no decoding,
 * no interceptor and no handler. What can be judged from the headers is judged first: a call with a
 * malformed content type, or one the caller is not authorized to make, goes on to grpc-js, which answers
 * it with its own status; its body is never read, so a malformed request is refused, not diagnosed, while
 * the node sheds (reading it would cost what shedding saves).
 *
 * A `grpc-timeout` that is not the spec's 1 to 8 digits and a unit is refused here, INVALID_ARGUMENT, on
 * every RPC: grpc-js reads it leniently (`5000 m`, or a value past its 32-bit range that it wraps), so
 * such a timeout would escape the node's cap on deadlines and the read-stall cut below.
 *
 * A call let through counts as arriving (`Admission.admitEarly`) until its request has been read or
 * its stream closed, so the calls of one burst, whose headers arrive before any handler runs, count
 * each other.
 *
 * A gated call's `grpc-timeout` counts from when the caller sent it, but grpc-js starts it when the
 * node reads the headers: after an event-loop stall (a burst being refused) that is up to the stall
 * later, and a reply in time by the node's clock reaches the caller late. So the timeout is first cut
 * by how long the request may have waited unread (`readStallMs`), for admission and for grpc-js.
 */
import * as http2 from "node:http2";
import { TLSSocket } from "node:tls";
import { status } from "@grpc/grpc-js";
import type { ServerInterceptingCallInterface } from "@grpc/grpc-js";
import { expectation } from "../errors.js";
import type { Admission } from "./admission.js";
import { grpcTimeoutMs, TIMEOUT_FORM, timeoutHeader } from "./http2-servers.js";
import type { AnyHttp2Server } from "./http2-servers.js";
import type { Authorize, Refusal } from "./rpc-guard.js";
import { refusedStatus } from "./status.js";

/** A gated RPC: its path, its admission, and whether it is open now (not while the node drains). */
export interface Gate {
  readonly path: string;
  readonly admission: Admission;
  readonly open: () => boolean;
}

type StreamListener = (
  this: AnyHttp2Server,
  stream: http2.ServerHttp2Stream,
  headers: http2.IncomingHttpHeaders,
  ...rest: unknown[]
) => void;

/** The caller's certificate as grpc-js's `getAuthContext` gives it, for the authorizer. */
function authContextOf(
  stream: http2.ServerHttp2Stream,
): ReturnType<ServerInterceptingCallInterface["getAuthContext"]> {
  const socket = stream.session?.socket;
  if (!(socket instanceof TLSSocket) || !socket.authorized) return {};
  const cert = socket.getPeerCertificate();
  return { transportSecurityType: "ssl", sslPeerCertificate: cert.raw ? cert : undefined };
}

function respond(stream: http2.ServerHttp2Stream, r: Refusal): void {
  stream.once("error", () => undefined);
  if (stream.destroyed || stream.headersSent) return;
  stream.respond(
    {
      [http2.constants.HTTP2_HEADER_STATUS]: http2.constants.HTTP_STATUS_OK,
      [http2.constants.HTTP2_HEADER_CONTENT_TYPE]: "application/grpc+proto",
      "grpc-status": String(r.code),
      "grpc-message": encodeURI(r.details),
      ...r.metadata?.toHttp2Headers(),
    },
    { endStream: true },
  );
}

/**
 * Puts `gates` in front of grpc-js's handling of `h2`'s streams (grpc-js's "stream" listeners move
 * behind it). Install it before any listener that must run ahead of grpc-js is prepended.
 * `readStallMs` says how long a request read now may have waited unread, ms (absent: 0).
 */
export function admitOnHeaders(
  h2: AnyHttp2Server,
  gates: readonly Gate[],
  options: { authorize?: Authorize; readStallMs?: () => number } = {},
): void {
  const { authorize, readStallMs } = options;
  const byPath = new Map(gates.map((g) => [g.path, g]));
  const grpcListeners = h2.listeners("stream") as StreamListener[];
  h2.removeAllListeners("stream");
  h2.on("stream", function (this: AnyHttp2Server, stream, headers, ...rest) {
    let remainingMs = grpcTimeoutMs(headers["grpc-timeout"]);
    if (remainingMs === undefined) {
      respond(stream, {
        code: status.INVALID_ARGUMENT,
        details: expectation("grpc-timeout", headers["grpc-timeout"], TIMEOUT_FORM, "request header"),
      });
      return;
    }
    const path = headers[http2.constants.HTTP2_HEADER_PATH];
    const gate = typeof path === "string" ? byPath.get(path) : undefined;
    const contentType = headers[http2.constants.HTTP2_HEADER_CONTENT_TYPE];
    if (
      gate !== undefined &&
      gate.open() &&
      typeof contentType === "string" &&
      contentType.startsWith("application/grpc") &&
      authorize?.({ path: gate.path, call: { getAuthContext: () => authContextOf(stream) } }) === undefined
    ) {
      const stall = remainingMs === Infinity ? 0 : (readStallMs?.() ?? 0);
      if (stall >= 1) {
        remainingMs = Math.max(0, remainingMs - stall);
        headers["grpc-timeout"] = timeoutHeader(remainingMs);
      }
      const admitted = gate.admission.admitEarly(remainingMs);
      if (typeof admitted !== "function") {
        respond(stream, refusedStatus(admitted));
        return;
      }
      // its request read (grpc-js hands it to the handler next) or its stream gone: no longer arriving
      stream.once("end", admitted);
      stream.once("close", admitted);
    }
    for (const listener of grpcListeners) listener.call(this, stream, headers, ...rest);
  } as StreamListener);
}
