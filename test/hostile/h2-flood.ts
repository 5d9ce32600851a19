/**
 * A client that opens more HTTP/2 streams on one connection than the server's
 * SETTINGS_MAX_CONCURRENT_STREAMS allows. Node's own client waits for a free stream instead, so this one
 * writes the frames itself: the preface, SETTINGS (and the ACK of the server's), then HEADERS of gRPC
 * calls that never send their message. It reads back which frames the server answered with.
 */
import { connect } from "node:net";

const PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");
const DATA = 0x0;
const HEADERS = 0x1;
const RST_STREAM = 0x3;
const SETTINGS = 0x4;
const GOAWAY = 0x7;
const END_HEADERS = 0x4;
const ACK = 0x1;

function frame(type: number, flags: number, streamId: number, payload: Buffer = Buffer.alloc(0)): Buffer {
  const head = Buffer.alloc(9);
  head.writeUIntBE(payload.length, 0, 3);
  head.writeUInt8(type, 3);
  head.writeUInt8(flags, 4);
  head.writeUInt32BE(streamId, 5);
  return Buffer.concat([head, payload]);
}

/** An HPACK integer with a 7-bit prefix (RFC 7541 §5.1), Huffman off. */
function hpackInt(n: number): Buffer {
  if (n < 127) return Buffer.from([n]);
  const out = [127];
  let rest = n - 127;
  while (rest >= 128) {
    out.push((rest % 128) + 128);
    rest = Math.floor(rest / 128);
  }
  out.push(rest);
  return Buffer.from(out);
}

/** A header block of literals without indexing, new names (RFC 7541 §6.2.2). */
function headerBlock(headers: Record<string, string>): Buffer {
  const parts: Buffer[] = [];
  for (const [name, value] of Object.entries(headers)) {
    parts.push(
      Buffer.from([0]),
      hpackInt(name.length),
      Buffer.from(name),
      hpackInt(value.length),
      Buffer.from(value),
    );
  }
  return Buffer.concat(parts);
}

export interface FloodResult {
  /** Streams the server reset, by HTTP/2 error code (7 REFUSED_STREAM). */
  readonly resets: Map<number, number>;
  /** GOAWAY error code, when the server closed the connection with one. */
  readonly goaway: number | undefined;
  /** ms from the flood's first HEADERS to the server's first RST_STREAM or GOAWAY; undefined: none came. */
  readonly firstRefusalMs: number | undefined;
  /** Streams the server answered with HEADERS (a response or a trailers-only status). */
  readonly answered: number;
}

/**
 * Opens `streams` calls to `path` at once on one connection to `port` (from `localAddress`), each
 * with `grpc-timeout` `timeoutMs`, and watches the connection for `watchMs`.
 */
export function streamFlood(options: {
  port: number;
  localAddress: string;
  path: string;
  streams: number;
  timeoutMs: number;
  watchMs: number;
}): Promise<FloodResult> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port: options.port, host: "127.0.0.1", localAddress: options.localAddress });
    const resets = new Map<number, number>();
    let goaway: number | undefined;
    let firstRefusalMs: number | undefined;
    let answered = 0;
    let floodAt = 0;
    let buf = Buffer.alloc(0);
    const refusal = (): void => {
      if (firstRefusalMs === undefined) firstRefusalMs = Date.now() - floodAt;
    };
    const flood = (): void => {
      floodAt = Date.now();
      const frames: Buffer[] = [];
      for (let i = 0; i < options.streams; i++) {
        const block = headerBlock({
          ":method": "POST",
          ":scheme": "http",
          ":path": options.path,
          ":authority": "flood",
          "content-type": "application/grpc",
          te: "trailers",
          "grpc-timeout": `${options.timeoutMs}m`,
        });
        frames.push(frame(HEADERS, END_HEADERS, 2 * i + 1, block));
      }
      socket.write(Buffer.concat(frames));
      setTimeout(() => {
        socket.destroy();
        resolve({ resets, goaway, firstRefusalMs, answered });
      }, options.watchMs);
    };
    socket.on("error", () => undefined);
    socket.on("connect", () => socket.write(Buffer.concat([PREFACE, frame(SETTINGS, 0, 0)])));
    socket.on("data", (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      while (buf.length >= 9) {
        const length = buf.readUIntBE(0, 3);
        if (buf.length < 9 + length) break;
        const type = buf.readUInt8(3);
        const flags = buf.readUInt8(4);
        const payload = buf.subarray(9, 9 + length);
        buf = buf.subarray(9 + length);
        if (type === SETTINGS && (flags & ACK) === 0) {
          socket.write(frame(SETTINGS, ACK, 0));
          if (floodAt === 0) flood();
        } else if (type === RST_STREAM) {
          const code = payload.readUInt32BE(0);
          resets.set(code, (resets.get(code) ?? 0) + 1);
          refusal();
        } else if (type === GOAWAY) {
          goaway = payload.readUInt32BE(4);
          refusal();
        } else if (type === HEADERS) {
          answered++;
        } else if (type === DATA) {
          // nothing to read: the calls never sent a message
        }
      }
    });
    socket.once("close", () => {
      if (floodAt === 0) reject(new Error("the server closed the connection before its SETTINGS"));
    });
  });
}
