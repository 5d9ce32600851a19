/**
 * Per-client bounds on a swarm server's HTTP/2 connections, for what grpc-js leaves open: how many
 * connections (in all and per remote address), how long one may take to say hello, how long one may
 * sit idle, how often it may ping, and how many reply bytes may wait on a client that does not read.
 * Each closes the connection (never the node) and reports through a `LimitLog`.
 */
import type * as http2 from "node:http2";
import type { Socket } from "node:net";
import { checkRange, intRange } from "../util/range.js";
import type { NumberRange } from "../util/range.js";
import type { AnyHttp2Server } from "./http2-servers.js";
import type { LimitLog } from "./limit-log.js";

export interface ConnectionLimits {
  /** Open connections in all; more are closed on arrival. */
  readonly maxConnections: number;
  /** Open connections from one remote address; more are closed on arrival. */
  readonly maxConnectionsPerAddress: number;
  /** Streams (calls) open at once on one connection (HTTP/2 SETTINGS_MAX_CONCURRENT_STREAMS). */
  readonly maxConcurrentStreams: number;
  /** A connection whose TLS handshake and HTTP/2 preface are not done within this is closed, ms. */
  readonly handshakeTimeoutMs: number;
  /** A connection with no open stream for this long is closed, ms. */
  readonly idleTimeoutMs: number;
  /** The server pings an idle-looking connection this often to find dead clients, ms. */
  readonly keepaliveTimeMs: number;
  /** A ping not answered within this closes the connection, ms. */
  readonly keepaliveTimeoutMs: number;
  /** Pings a client may send within `keepaliveTimeMs` before its connection is closed. */
  readonly maxPingsPerKeepalive: number;
  /** Reply bytes waiting to be sent on one connection (a client that does not read); more closes it. */
  readonly maxPendingSendBytes: number;
  /** A connection whose waiting reply bytes have not shrunk for this long is closed, ms. */
  readonly sendStallTimeoutMs: number;
}

export const CONNECTION_DEFAULTS: ConnectionLimits = {
  maxConnections: 4_096,
  maxConnectionsPerAddress: 512,
  maxConcurrentStreams: 256,
  handshakeTimeoutMs: 10_000,
  idleTimeoutMs: 300_000,
  keepaliveTimeMs: 60_000,
  keepaliveTimeoutMs: 20_000,
  maxPingsPerKeepalive: 10,
  maxPendingSendBytes: 16 * 1024 * 1024,
  sendStallTimeoutMs: 10_000,
};

export const CONNECTION_RANGES: Readonly<Record<keyof ConnectionLimits, NumberRange>> = {
  maxConnections: intRange(1, 1_000_000),
  maxConnectionsPerAddress: intRange(1, 1_000_000),
  maxConcurrentStreams: intRange(1, 1_000_000),
  handshakeTimeoutMs: intRange(100, 3_600_000),
  idleTimeoutMs: intRange(1_000, 86_400_000),
  keepaliveTimeMs: intRange(1_000, 86_400_000),
  keepaliveTimeoutMs: intRange(100, 3_600_000),
  maxPingsPerKeepalive: intRange(1, 1_000_000),
  maxPendingSendBytes: intRange(65_536, 1024 * 1024 * 1024),
  sendStallTimeoutMs: intRange(100, 3_600_000),
};

/** `limits` with defaults filled, each checked against its range (INVALID_CONFIG). */
export function resolveConnectionLimits(limits: Partial<ConnectionLimits>): ConnectionLimits {
  const out: Record<string, number> = {};
  for (const key of Object.keys(CONNECTION_DEFAULTS) as (keyof ConnectionLimits)[]) {
    out[key] = checkRange(
      `connections.${key}`,
      limits[key] ?? CONNECTION_DEFAULTS[key],
      CONNECTION_RANGES[key],
    );
  }
  return out as unknown as ConnectionLimits;
}

/** How often pending reply bytes are looked at, ms. */
const SWEEP_MS = 500;

interface SessionState {
  readonly session: http2.ServerHttp2Session;
  readonly address: string;
  readonly open: Set<http2.ServerHttp2Stream>;
  /** Most streams open at once so far. */
  mostOpen: number;
  idleSince: number;
  pings: number;
  pingWindowStart: number;
  pending: number;
  pendingSince: number;
}

/** Installs the limits on one HTTP/2 server; returns a stop function (clears the sweep timer). */
export function limitConnections(h2: AnyHttp2Server, limits: ConnectionLimits, log: LimitLog): () => void {
  h2.maxConnections = limits.maxConnections;
  h2.on("drop", (data?: { remoteAddress?: string }) => {
    log.report("maxConnections", { max: limits.maxConnections, remoteAddress: data?.remoteAddress });
  });
  const perAddress = new Map<string, number>();
  const waiting = new Map<string, NodeJS.Timeout>();
  const sessions = new Set<SessionState>();

  h2.on("connection", (socket: Socket) => {
    const address = socket.remoteAddress ?? "unknown";
    const n = (perAddress.get(address) ?? 0) + 1;
    perAddress.set(address, n);
    socket.once("close", () => {
      const left = (perAddress.get(address) ?? 1) - 1;
      if (left <= 0) perAddress.delete(address);
      else perAddress.set(address, left);
    });
    if (n > limits.maxConnectionsPerAddress) {
      log.report("maxConnectionsPerAddress", {
        max: limits.maxConnectionsPerAddress,
        remoteAddress: address,
      });
      socket.destroy();
      return;
    }
    const key = `${address}:${socket.remotePort}`;
    const timer = setTimeout(() => {
      waiting.delete(key);
      log.report("handshakeTimeoutMs", { max: limits.handshakeTimeoutMs, remoteAddress: address });
      socket.destroy();
    }, limits.handshakeTimeoutMs);
    timer.unref();
    waiting.set(key, timer);
    socket.once("close", () => {
      clearTimeout(timer);
      waiting.delete(key);
    });
  });

  h2.on("session", (session: http2.ServerHttp2Session) => {
    const socket = session.socket;
    const address = socket.remoteAddress ?? "unknown";
    const key = `${address}:${socket.remotePort}`;
    const now = Date.now();
    const s: SessionState = {
      session,
      address,
      open: new Set(),
      mostOpen: 0,
      idleSince: now,
      pings: 0,
      pingWindowStart: now,
      pending: 0,
      pendingSince: now,
    };
    sessions.add(s);
    session.once("remoteSettings", () => {
      const t = waiting.get(key);
      if (t !== undefined) clearTimeout(t);
      waiting.delete(key);
    });
    session.on("ping", () => {
      const at = Date.now();
      if (at - s.pingWindowStart > limits.keepaliveTimeMs) {
        s.pingWindowStart = at;
        s.pings = 0;
      }
      if (++s.pings > limits.maxPingsPerKeepalive) {
        log.report("maxPingsPerKeepalive", { max: limits.maxPingsPerKeepalive, remoteAddress: address });
        close(s);
      }
    });
    session.on("stream", (stream: http2.ServerHttp2Stream) => {
      s.open.add(stream);
      s.mostOpen = Math.max(s.mostOpen, s.open.size);
      stream.once("close", () => {
        s.open.delete(stream);
        if (s.open.size === 0) s.idleSince = Date.now();
      });
    });
    // A client that opens more streams than it was allowed (SETTINGS_MAX_CONCURRENT_STREAMS, which it
    // acknowledged) is cut off by HTTP/2 itself: GOAWAY PROTOCOL_ERROR, which Node reports only as a
    // session "Protocol error". Reported as this limit when the session had reached it.
    session.on("error", () => {
      if (s.mostOpen >= limits.maxConcurrentStreams) {
        log.report("maxConcurrentStreams", {
          max: limits.maxConcurrentStreams,
          remoteAddress: address,
        });
      }
    });
    session.once("close", () => sessions.delete(s));
  });

  const close = (s: SessionState): void => {
    sessions.delete(s);
    s.session.destroy();
  };

  const sweep = setInterval(() => {
    const now = Date.now();
    for (const s of sessions) {
      if (s.session.destroyed) {
        sessions.delete(s);
        continue;
      }
      if (s.open.size === 0 && now - s.idleSince > limits.idleTimeoutMs) {
        log.report("idleTimeoutMs", { max: limits.idleTimeoutMs, remoteAddress: s.address });
        close(s);
        continue;
      }
      const pending = pendingBytes(s);
      if (pending > limits.maxPendingSendBytes) {
        log.report("maxPendingSendBytes", {
          max: limits.maxPendingSendBytes,
          pending,
          remoteAddress: s.address,
        });
        close(s);
        continue;
      }
      if (pending === 0 || pending < s.pending) s.pendingSince = now;
      s.pending = pending;
      if (pending > 0 && now - s.pendingSince > limits.sendStallTimeoutMs) {
        log.report("sendStallTimeoutMs", {
          max: limits.sendStallTimeoutMs,
          pending,
          remoteAddress: s.address,
        });
        close(s);
      }
    }
  }, SWEEP_MS);
  sweep.unref();
  return () => clearInterval(sweep);
}

/** Reply bytes queued on a session and not yet taken by the client (flow control) or the socket. */
function pendingBytes(s: SessionState): number {
  let total = (s.session.state.outboundQueueSize ?? 0) + (s.session.socket?.writableLength ?? 0);
  for (const st of s.open) total += st.writableLength;
  return total;
}
