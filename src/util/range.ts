/**
 * Numeric ranges, declared once next to the option they bound and read by everything that checks or
 * documents that option: the library's own validation (`checkRange`), the node's config schema and
 * its JSON Schema, docs/configuration.md. `describeRange` is the one wording (`an integer >= 1 <= 64`).
 *
 * @example
 * const slices = intRange(1, 64);
 * checkRange("estimator.slices", 0, slices); // throws 'estimator.slices: got 0, expected an integer >= 1 <= 64'
 */
import { invalid } from "../errors.js";
import type { TailswarmErrorCode } from "../errors.js";

export interface NumberRange {
  /** Whole numbers only. */
  readonly integer?: boolean;
  /** Inclusive lower bound. */
  readonly min?: number;
  /** Exclusive lower bound. */
  readonly above?: number;
  /** Inclusive upper bound. */
  readonly max?: number;
}

/** Integers from `min` to `max`, both included (no upper bound when `max` is omitted). */
export function intRange(min: number, max?: number): NumberRange {
  return { integer: true, min, ...(max !== undefined && { max }) };
}

/** Finite numbers from `min` to `max`, both included (no upper bound when `max` is omitted). */
export function numberRange(min: number, max?: number): NumberRange {
  return { integer: false, min, ...(max !== undefined && { max }) };
}

/** Finite numbers strictly greater than `above`, up to `max` included. */
export function numberAbove(above: number, max?: number): NumberRange {
  return { integer: false, above, ...(max !== undefined && { max }) };
}

/** The range as error messages and docs say it: `an integer >= 1 <= 64`, `a number > 0`. */
export function describeRange(r: NumberRange): string {
  const parts = [r.integer === true ? "an integer" : "a number"];
  if (r.above !== undefined) parts.push(`> ${r.above}`);
  if (r.min !== undefined) parts.push(`>= ${r.min}`);
  if (r.max !== undefined) parts.push(`<= ${r.max}`);
  return parts.join(" ");
}

export function inRange(value: unknown, r: NumberRange): value is number {
  return (
    typeof value === "number" &&
    Number.isFinite(value) &&
    (r.integer !== true || Number.isInteger(value)) &&
    (r.min === undefined || value >= r.min) &&
    (r.above === undefined || value > r.above) &&
    (r.max === undefined || value <= r.max)
  );
}

/**
 * `value` when it is in `r`; otherwise a TailswarmError in the one message style
 * (`INVALID_CONFIG` unless another code is given).
 */
export function checkRange(
  field: string,
  value: unknown,
  r: NumberRange,
  options?: { source?: string; code?: TailswarmErrorCode },
): number {
  if (inRange(value, r)) return value;
  throw invalid(field, value, describeRange(r), {
    code: options?.code ?? "INVALID_CONFIG",
    ...(options?.source !== undefined && { source: options.source }),
  });
}
