/**
 * What the node needs from membership: the live peers (by node id) with their addresses, every
 * known peer for `status`, and a callback when a peer restarts (its estimates start fresh).
 * src/mesh's membership provides it; `node.ts` adapts it here so the daemon depends on four methods.
 */
import type { PeerId } from "../estimate/types.js";

export interface PeerInfo {
  readonly id: PeerId;
  readonly address: string;
  readonly region: string;
  readonly up: boolean;
  readonly restarts: number;
}

export interface PeerView {
  /** Ids of peers currently up (this node excluded), sorted. */
  live(): PeerId[];
  addressOf(peer: PeerId): string | undefined;
  all(): PeerInfo[];
  /** Called with a peer's id when it restarted (a new start time): its estimates start fresh. */
  onReset(listener: (peer: PeerId) => void): void;
  start(): void;
  close(): void;
}
