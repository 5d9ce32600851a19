/**
 * Checks for handler options as they come from a config file: each failure is an INVALID_CONFIG
 * TailswarmError naming the dotted path, the value and what was expected.
 */
import { TailswarmError } from "../errors.js";

export type Options = Readonly<Record<string, unknown>>;

export function describe(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value);
  if (value === undefined) return "nothing";
  try {
    const text = JSON.stringify(value);
    return text.length > 80 ? `${text.slice(0, 77)}...` : text;
  } catch {
    return typeof value;
  }
}

export function optionError(path: string, value: unknown, expected: string): TailswarmError {
  return new TailswarmError("INVALID_CONFIG", `${path}: got ${describe(value)}, expected ${expected}`);
}

/** The options object itself (undefined → {}), with unknown keys rejected. */
export function optionsObject(raw: unknown, path: string, known: readonly string[]): Options {
  if (raw === undefined || raw === null) return {};
  if (typeof raw !== "object" || Array.isArray(raw)) throw optionError(path, raw, "an object");
  for (const key of Object.keys(raw)) {
    if (!known.includes(key)) {
      throw new TailswarmError(
        "INVALID_CONFIG",
        `${path}.${key}: unknown key, expected one of ${known.join(", ") || "(none)"}`,
      );
    }
  }
  return raw as Options;
}

export interface NumberRule {
  min?: number;
  max?: number;
  /** Exclusive lower bound. */
  above?: number;
  integer?: boolean;
}

function ruleText(rule: NumberRule): string {
  const parts = [rule.integer === true ? "an integer" : "a number"];
  if (rule.above !== undefined) parts.push(`> ${rule.above}`);
  if (rule.min !== undefined) parts.push(`>= ${rule.min}`);
  if (rule.max !== undefined) parts.push(`<= ${rule.max}`);
  return parts.join(" ");
}

export function checkNumber(value: unknown, path: string, rule: NumberRule): number {
  const ok =
    typeof value === "number" &&
    Number.isFinite(value) &&
    (rule.integer !== true || Number.isInteger(value)) &&
    (rule.min === undefined || value >= rule.min) &&
    (rule.max === undefined || value <= rule.max) &&
    (rule.above === undefined || value > rule.above);
  if (!ok) throw optionError(path, value, ruleText(rule));
  return value;
}

export function numberOption(
  opts: Options,
  key: string,
  path: string,
  rule: NumberRule,
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
