/**
 * One frozen `{ tailswarm.peer }` attribute set per peer, built once and reused by every record and
 * collection, so that nothing per-peer is allocated on the hot path.
 */
import type { Attributes } from "@opentelemetry/api";
import type { PeerId } from "../estimate/types.js";
import { ATTR } from "./attributes.js";

/** Attribute sets kept at most; past this the cache starts over (peers come and go). */
const MAX_PEERS = 10_000;

export class PeerAttributes {
  readonly #attrs = new Map<PeerId, Attributes>();

  of(peer: PeerId): Attributes {
    let a = this.#attrs.get(peer);
    if (a === undefined) {
      if (this.#attrs.size >= MAX_PEERS) this.#attrs.clear();
      a = Object.freeze({ [ATTR.peer]: peer });
      this.#attrs.set(peer, a);
    }
    return a;
  }
}
