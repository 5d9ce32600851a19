/**
 * Counts kept in plain cells, each with its attribute set built once, and exported through observable
 * counters when a reader collects: a synchronous `add` with attributes hashes them on every call. A
 * count runs on every fan-out, so finding its cell builds nothing: no key string, no closure.
 */
import type { Attributes, BatchObservableResult, Observable } from "@opentelemetry/api";
import { ATTR } from "./attributes.js";

interface Cell {
  readonly attrs: Attributes;
  value: number;
}

/** Builds the attribute set of a cell the first time it is counted (a module-level function). */
export type CellAttributes = (a: string, b: string, flag: boolean) => Attributes;

/**
 * A set of counts keyed by up to two strings and a flag (pass "" and false for the parts a count does
 * not have), looked up level by level.
 */
export class Cells {
  readonly #make: CellAttributes;
  readonly #cells = new Map<string, Map<string, [Cell | undefined, Cell | undefined]>>();

  constructor(make: CellAttributes) {
    this.#make = make;
  }

  add(a: string, b: string, flag: boolean, delta: number): void {
    let byB = this.#cells.get(a);
    if (byB === undefined) {
      byB = new Map();
      this.#cells.set(a, byB);
    }
    let pair = byB.get(b);
    if (pair === undefined) {
      pair = [undefined, undefined];
      byB.set(b, pair);
    }
    const i = flag ? 1 : 0;
    const c = pair[i];
    if (c === undefined) pair[i] = { attrs: Object.freeze(this.#make(a, b, flag)), value: delta };
    else c.value += delta;
  }

  observe(result: BatchObservableResult, instrument: Observable): void {
    for (const byB of this.#cells.values())
      for (const pair of byB.values())
        for (const c of pair) if (c !== undefined) result.observe(instrument, c.value, c.attrs);
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
  readonly #other = new Cells(branchAttrs);

  add(mode: string, outcome: string, pivotal: boolean): void {
    const m = MODES.indexOf(mode as (typeof MODES)[number]);
    const o = OUTCOMES.indexOf(outcome as (typeof OUTCOMES)[number]);
    if (m < 0 || o < 0) {
      this.#other.add(mode, outcome, pivotal, 1);
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
