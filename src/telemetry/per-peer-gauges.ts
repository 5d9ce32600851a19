/**
 * The scaffolding of a set of per-peer observable instruments read in one batch callback when a
 * reader collects: a swappable source, one frozen `{ tailswarm.peer }` attribute set per peer (kept,
 * so nothing is built per collection), and the callback's registration and removal. Subclasses create
 * their instruments, pass them to `register`, and observe one peer's values in `observe`.
 */
import type { Attributes, BatchObservableResult, Meter, Observable } from "@opentelemetry/api";
import type { Clock } from "../clock/clock.js";
import type { PeerId } from "../estimate/types.js";
import { ATTR } from "./attributes.js";

/** Attribute sets kept at most; past this the cache starts over (peers come and go). */
const MAX_PEERS = 10_000;

export abstract class PerPeerGauges<Source> {
  #source: Source | undefined;
  #observables: Observable[] = [];
  readonly #attrs = new Map<PeerId, Attributes>();
  readonly #callback = (r: BatchObservableResult): void => {
    const source = this.#source;
    if (source !== undefined) this.observe(r, source, this.clock.now());
  };

  protected constructor(
    protected readonly meter: Meter,
    protected readonly clock: Clock,
    source: Source | undefined,
  ) {
    this.#source = source;
  }

  /** Replaces what the gauges read (undefined: no observations). */
  setSource(source: Source | undefined): void {
    this.#source = source;
  }

  close(): void {
    this.meter.removeBatchObservableCallback(this.#callback, this.#observables);
  }

  /** Registers the batch callback over `observables` (once, from the subclass constructor). */
  protected register(observables: Observable[]): void {
    this.#observables = observables;
    this.meter.addBatchObservableCallback(this.#callback, observables);
  }

  /** Observes every peer of `source` at clock time `now`. */
  protected abstract observe(r: BatchObservableResult, source: Source, now: number): void;

  /** The attribute set of `peer`. */
  protected attrsOf(peer: PeerId): Attributes {
    let a = this.#attrs.get(peer);
    if (a === undefined) {
      if (this.#attrs.size > MAX_PEERS) this.#attrs.clear();
      a = Object.freeze({ [ATTR.peer]: peer });
      this.#attrs.set(peer, a);
    }
    return a;
  }
}
