/**
 * Checks for handler options as they come from a config file: each failure is an INVALID_CONFIG
 * TailswarmError in the one message style (`path: got X, expected Y`).
 */
import { invalid } from "../errors.js";
import type { TailswarmError } from "../errors.js";
import { didYouMean } from "../util/did-you-mean.js";
import { checkRange } from "../util/range.js";
import type { NumberRange } from "../util/range.js";

export type Options = Readonly<Record<string, unknown>>;

/** An INVALID_CONFIG error in the one message style. */
export function optionError(path: string, value: unknown, expected: string): TailswarmError {
  return invalid(path, value, expected, { code: "INVALID_CONFIG" });
}

/** The options object itself (undefined → {}), with unknown keys rejected. */
export function optionsObject(raw: unknown, path: string, known: readonly string[]): Options {
  if (raw === undefined || raw === null) return {};
  if (typeof raw !== "object" || Array.isArray(raw)) throw optionError(path, raw, "an object");
  for (const [key, value] of Object.entries(raw)) {
    if (!known.includes(key)) {
      const near = didYouMean(key, known);
      throw optionError(
        `${path}.${key}`,
        value,
        `a known key${near === undefined ? "" : ` (did you mean ${near}?)`}; known keys: ${known.join(", ") || "(none)"}`,
      );
    }
  }
  return raw as Options;
}

/** A number in `rule` (src/util/range.ts), else INVALID_CONFIG naming `path`. */
export function checkNumber(value: unknown, path: string, rule: NumberRange): number {
  return checkRange(path, value, rule);
}

export function numberOption(
  opts: Options,
  key: string,
  path: string,
  rule: NumberRange,
  fallback: number,
): number {
  const value = opts[key];
  return value === undefined ? fallback : checkNumber(value, `${path}.${key}`, rule);
}

export function stringOption(opts: Options, key: string, path: string): string | undefined {
  const value = opts[key];
  if (value === undefined) return undefined;
  if (typeof value !== "string" || value.length === 0)
    throw optionError(`${path}.${key}`, value, "a non-empty string");
  return value;
}

export function booleanOption(opts: Options, key: string, path: string, fallback: boolean): boolean {
  const value = opts[key];
  if (value === undefined) return fallback;
  if (typeof value !== "boolean") throw optionError(`${path}.${key}`, value, "true or false");
  return value;
}

export function seedOption(opts: Options, key: string, path: string): number | string | undefined {
  const value = opts[key];
  if (value === undefined) return undefined;
  if (
    (typeof value === "number" && Number.isFinite(value)) ||
    (typeof value === "string" && value.length > 0)
  ) {
    return value;
  }
  throw optionError(`${path}.${key}`, value, "a number or a non-empty string");
}
