/**
 * Counts kept in plain cells, each with its attribute set built once, and exported through observable
 * counters when a reader collects: a synchronous `add` with attributes hashes them on every call.
 */
import type { Attributes, BatchObservableResult, Observable } from "@opentelemetry/api";
import { ATTR } from "./attributes.js";

interface Cell {
  readonly attrs: Attributes;
  value: number;
}

/** A set of counts keyed by a string. */
export class Cells {
  readonly #cells = new Map<string, Cell>();

  add(key: string, make: () => Attributes, delta: number): void {
    let c = this.#cells.get(key);
    if (c === undefined) {
      c = { attrs: Object.freeze(make()), value: 0 };
      this.#cells.set(key, c);
    }
    c.value += delta;
  }

  observe(result: BatchObservableResult, instrument: Observable): void {
    for (const c of this.#cells.values()) result.observe(instrument, c.value, c.attrs);
  }
}

const MODES = ["speculate", "synchronous", "degrade"] as const;
const OUTCOMES = ["committed", "partial", "abandoned", "late", "failed"] as const;

function branchAttrs(mode: string, outcome: string, pivotal: boolean): Attributes {
  return Object.freeze({ [ATTR.mode]: mode, [ATTR.branchOutcome]: outcome, [ATTR.branchPivotal]: pivotal });
}

/**
 * Branch counts by (mode, outcome, pivotal): a fixed table indexed by small integers, so that counting
 * a branch builds no key string and hashes nothing. A mode outside the table (a future one) falls back
 * to keyed cells.
 */
export class BranchCells {
  readonly #cells: (Cell | undefined)[] = new Array<Cell | undefined>(
    MODES.length * OUTCOMES.length * 2,
  ).fill(undefined);
  readonly #other = new Cells();

  add(mode: string, outcome: string, pivotal: boolean): void {
    const m = MODES.indexOf(mode as (typeof MODES)[number]);
    const o = OUTCOMES.indexOf(outcome as (typeof OUTCOMES)[number]);
    if (m < 0 || o < 0) {
      this.#other.add(
        `${mode}\0${outcome}\0${pivotal ? 1 : 0}`,
        () => branchAttrs(mode, outcome, pivotal),
        1,
      );
      return;
    }
    const i = (m * OUTCOMES.length + o) * 2 + (pivotal ? 1 : 0);
    const c = this.#cells[i];
    if (c === undefined) this.#cells[i] = { attrs: branchAttrs(mode, outcome, pivotal), value: 1 };
    else c.value++;
  }

  observe(result: BatchObservableResult, instrument: Observable): void {
    for (const c of this.#cells) if (c !== undefined) result.observe(instrument, c.value, c.attrs);
    this.#other.observe(result, instrument);
  }
}
