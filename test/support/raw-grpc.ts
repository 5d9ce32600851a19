/**
 * gRPC unary calls as plain HTTP/2 requests, for a client that must cost less than the node it loads
 * (the overload bench: a grpc-js client spends more CPU per call than the node spends refusing it, then
 * reads in-time answers late) or must send what a gRPC client would not (the hostile suite). A call is
 * timed from its request to its status (headers or trailers); one with no status within `giveUpMs` is
 * cancelled and reported as `GAVE_UP`.
 */
import * as http2 from "node:http2";

/** The code of a call that got no status within its `giveUpMs`. */
export const GAVE_UP = -1;

export interface RawStatus {
  /** grpc-status, or GAVE_UP; a stream reset or a closed connection without a status is UNAVAILABLE (14). */
  readonly code: number;
  /** The response body as sent: length-prefixed messages (empty for a trailers-only status). */
  readonly body: Buffer;
  readonly details: string;
  readonly headers: http2.IncomingHttpHeaders;
  readonly ms: number;
}

/** `body` as one gRPC message on the wire (uncompressed, length-prefixed). */
export function grpcFrame(body: Uint8Array): Buffer {
  const frame = Buffer.alloc(5 + body.length);
  frame.writeUInt32BE(body.length, 1);
  frame.set(body, 5);
  return frame;
}

export function rawUnary(
  session: http2.ClientHttp2Session,
  path: string,
  frame: Buffer,
  options: { giveUpMs: number; timeoutMs?: number; headers?: http2.OutgoingHttpHeaders },
): Promise<RawStatus> {
  const t0 = Date.now();
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let done = false;
    const finish = (code: number, headers: http2.IncomingHttpHeaders = {}): void => {
      if (done) return;
      done = true;
      clearTimeout(giveUp);
      const raw = headers["grpc-message"];
      resolve({
        code,
        details: typeof raw === "string" ? decodeURIComponent(raw) : "",
        headers,
        body: Buffer.concat(chunks),
        ms: Date.now() - t0,
      });
      if (!req.closed) req.close(http2.constants.NGHTTP2_CANCEL);
    };
    const req = session.request({
      ":method": "POST",
      ":path": path,
      "content-type": "application/grpc",
      te: "trailers",
      ...(options.timeoutMs === undefined ? {} : { "grpc-timeout": `${Math.ceil(options.timeoutMs)}m` }),
      ...options.headers,
    });
    const giveUp = setTimeout(() => finish(GAVE_UP), options.giveUpMs);
    const status = (h: http2.IncomingHttpHeaders): void => {
      if (h["grpc-status"] !== undefined) finish(Number(h["grpc-status"]), h);
    };
    req.on("response", status);
    req.on("trailers", status);
    req.on("error", () => finish(14));
    req.on("close", () => finish(14));
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.end(frame);
  });
}
