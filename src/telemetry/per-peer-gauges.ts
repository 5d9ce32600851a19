/**
 * The scaffolding of a set of per-peer observable instruments read in one batch callback when a
 * reader collects: a swappable source, the peers' attribute sets (peer-attributes.ts), the instruments
 * made from a table, and the callback's registration and removal. Subclasses observe one source.
 */
import { ValueType } from "@opentelemetry/api";
import type { Attributes, BatchObservableResult, Meter, Observable } from "@opentelemetry/api";
import type { Clock } from "../clock/clock.js";
import type { PeerId } from "../estimate/types.js";
import { PeerAttributes } from "./peer-attributes.js";

/** One per-peer instrument: a gauge unless `counter`; `int` for integer values. */
export interface PeerInstrument {
  readonly name: string;
  readonly description: string;
  readonly unit: string;
  readonly int?: boolean;
  readonly counter?: boolean;
}

export abstract class PerPeerGauges<Source, Key extends string> {
  #source: Source | undefined;
  readonly #observables: Observable[];
  readonly #peers = new PeerAttributes();
  /** The instruments, by the keys of the table they were made from. */
  protected readonly instruments: Readonly<Record<Key, Observable>>;
  readonly #callback = (r: BatchObservableResult): void => {
    const source = this.#source;
    if (source !== undefined) this.observe(r, source, this.clock.now());
  };

  protected constructor(
    protected readonly meter: Meter,
    protected readonly clock: Clock,
    source: Source | undefined,
    table: Readonly<Record<Key, PeerInstrument>>,
  ) {
    this.#source = source;
    const made = {} as Record<Key, Observable>;
    for (const key of Object.keys(table) as Key[]) {
      const { name, description, unit, int, counter } = table[key];
      const options = { description, unit, ...(int === true && { valueType: ValueType.INT }) };
      made[key] =
        counter === true
          ? meter.createObservableCounter(name, options)
          : meter.createObservableGauge(name, options);
    }
    this.instruments = made;
    this.#observables = Object.values(made);
    meter.addBatchObservableCallback(this.#callback, this.#observables);
  }

  /** Replaces what the gauges read (undefined: no observations). */
  setSource(source: Source | undefined): void {
    this.#source = source;
  }

  close(): void {
    this.meter.removeBatchObservableCallback(this.#callback, this.#observables);
  }

  /** Observes every peer of `source` at clock time `now`. */
  protected abstract observe(r: BatchObservableResult, source: Source, now: number): void;

  /** The attribute set of `peer`. */
  protected attrsOf(peer: PeerId): Attributes {
    return this.#peers.of(peer);
  }
}
