/**
 * One gRPC channel per peer address, shared by branches, abandons and membership probes. Reconnect
 * backoff is shortened from grpc-js's defaults (1 s initial, 120 s max) so that a restarted peer is
 * reachable again within a probe interval or two. An IP literal is dialled as `ipv4:`/`ipv6:`, without
 * a DNS resolver (grpc-js builds a c-ares resolver per channel otherwise).
 */
import { isIP } from "node:net";
import * as grpc from "@grpc/grpc-js";

export interface ChannelPoolOptions {
  /** Default: insecure. */
  readonly credentials?: grpc.ChannelCredentials;
  /** Extra grpc-js channel options (override the defaults below). */
  readonly channelOptions?: grpc.ChannelOptions;
}

export const DEFAULT_CHANNEL_OPTIONS: grpc.ChannelOptions = {
  "grpc.initial_reconnect_backoff_ms": 100,
  "grpc.min_reconnect_backoff_ms": 100,
  "grpc.max_reconnect_backoff_ms": 2_000,
  "grpc.max_receive_message_length": 4 * 1024 * 1024,
  "grpc.keepalive_time_ms": 30_000,
  "grpc.keepalive_timeout_ms": 10_000,
};

/** The grpc-js target of a peer address: `ipv4:`/`ipv6:` for an IP literal (no resolver), else as given. */
function channelTarget(address: string): string {
  const m = /^\[?([^\]]+?)\]?:(\d+)$/.exec(address);
  if (m === null) return address;
  const family = isIP(m[1]!);
  if (family === 4) return `ipv4:${address}`;
  return family === 6 && address.startsWith("[") ? `ipv6:${address}` : address;
}

export class ChannelPool {
  readonly #clients = new Map<string, grpc.Client>();
  /** Last `get` of each address, ms (performance clock, for `closeIdle`). */
  readonly #usedAt = new Map<string, number>();
  readonly #credentials: grpc.ChannelCredentials;
  readonly #options: grpc.ChannelOptions;
  readonly #onClose = new Set<(address: string) => void>();

  constructor(options: ChannelPoolOptions = {}) {
    this.#credentials = options.credentials ?? grpc.credentials.createInsecure();
    this.#options = { ...DEFAULT_CHANNEL_OPTIONS, ...options.channelOptions };
  }

  /** The client (channel) for `address` ("host:port" or any grpc-js target), created on first use. */
  get(address: string): grpc.Client {
    this.#usedAt.set(address, performance.now());
    let c = this.#clients.get(address);
    if (c === undefined) {
      c = new grpc.Client(channelTarget(address), this.#credentials, this.#options);
      this.#clients.set(address, c);
    }
    return c;
  }

  has(address: string): boolean {
    return this.#clients.has(address);
  }

  addresses(): string[] {
    return [...this.#clients.keys()];
  }

  /** Called with the address when its channel is closed (users drop per-address state). */
  onClose(listener: (address: string) => void): () => void {
    this.#onClose.add(listener);
    return () => this.#onClose.delete(listener);
  }

  /** Closes every channel not used (`get`) for `idleMs`; returns how many. */
  closeIdle(idleMs: number): number {
    const beforeMs = performance.now() - idleMs;
    let closed = 0;
    for (const [address, at] of [...this.#usedAt]) {
      if (at < beforeMs) {
        this.close(address);
        closed++;
      }
    }
    return closed;
  }

  close(address: string): void {
    const c = this.#clients.get(address);
    this.#usedAt.delete(address);
    if (c === undefined) return;
    this.#clients.delete(address);
    for (const l of this.#onClose) l(address);
    c.close();
  }

  closeAll(): void {
    for (const address of [...this.#clients.keys()]) this.close(address);
  }
}
