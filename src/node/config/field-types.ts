/**
 * Value types of config fields. Each type checks a typed value (from a JSON/YAML file) and parses a
 * string (from an environment variable or a flag); both return the value or an `expected` text.
 */
export type Check<T> =
  | { ok: true; value: T }
  /** `at` (e.g. `[1].use`) and `value` point inside a structured value when the fault is there. */
  | { ok: false; expected: string; at?: string; value?: unknown };

export interface FieldType<T> {
  /** What the value must be, as the error messages and docs say it. */
  readonly expected: string;
  check(value: unknown): Check<T>;
  parse(text: string): Check<T>;
}

const ok = <T>(value: T): Check<T> => ({ ok: true, value });

function numberType(opts: { integer: boolean; min?: number; max?: number }): FieldType<number> {
  const parts = [opts.integer ? "an integer" : "a number"];
  if (opts.min !== undefined) parts.push(`>= ${opts.min}`);
  if (opts.max !== undefined) parts.push(`<= ${opts.max}`);
  const expected = parts.join(" ");
  const check = (v: unknown): Check<number> =>
    typeof v === "number" &&
    Number.isFinite(v) &&
    (!opts.integer || Number.isInteger(v)) &&
    (opts.min === undefined || v >= opts.min) &&
    (opts.max === undefined || v <= opts.max)
      ? ok(v)
      : { ok: false, expected };
  return {
    expected,
    check,
    parse: (t) => (t.trim() === "" ? { ok: false, expected } : check(Number(t.trim()))),
  };
}

export const int = (min?: number, max?: number): FieldType<number> =>
  numberType({ integer: true, ...(min !== undefined && { min }), ...(max !== undefined && { max }) });

export const num = (min?: number, max?: number): FieldType<number> =>
  numberType({ integer: false, ...(min !== undefined && { min }), ...(max !== undefined && { max }) });

export const bool: FieldType<boolean> = {
  expected: "true or false",
  check: (v) => (typeof v === "boolean" ? ok(v) : { ok: false, expected: "true or false" }),
  parse: (t) => {
    const s = t.trim().toLowerCase();
    if (["true", "1", "yes", "on"].includes(s)) return ok(true);
    if (["false", "0", "no", "off"].includes(s)) return ok(false);
    return { ok: false, expected: "true or false (also 1/0, yes/no, on/off)" };
  },
};

export function text(expected = "a non-empty string", pattern?: RegExp): FieldType<string> {
  const check = (v: unknown): Check<string> =>
    typeof v === "string" && v.length > 0 && (pattern === undefined || pattern.test(v))
      ? ok(v)
      : { ok: false, expected };
  return { expected, check, parse: (t) => check(t.trim()) };
}

export function oneOf<T extends string>(values: readonly T[]): FieldType<T> {
  const expected = `one of ${values.join(", ")}`;
  const check = (v: unknown): Check<T> =>
    typeof v === "string" && (values as readonly string[]).includes(v) ? ok(v as T) : { ok: false, expected };
  return { expected, check, parse: (t) => check(t.trim()) };
}

/** host:port, with the host a name, an IPv4 address or a bracketed IPv6 address. */
export function isHostPort(v: string, allowZeroPort: boolean): boolean {
  const m = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9._-]+):(\d{1,5})$/.exec(v);
  if (m === null) return false;
  const port = Number(m[2]);
  return port <= 65535 && (allowZeroPort || port > 0);
}

export function hostPort(allowZeroPort: boolean): FieldType<string> {
  const expected = `host:port (port ${allowZeroPort ? "0" : "1"}-65535; IPv6 as [::1]:port)`;
  const check = (v: unknown): Check<string> =>
    typeof v === "string" && isHostPort(v, allowZeroPort) ? ok(v) : { ok: false, expected };
  return { expected, check, parse: (t) => check(t.trim()) };
}

/** A list: an array in files, a comma-separated string in env and flags. */
export function listOf<T>(item: FieldType<T>): FieldType<T[]> {
  const expected = `a list of ${item.expected} (comma-separated in env and flags)`;
  const all = (items: unknown[], each: (x: unknown) => Check<T>): Check<T[]> => {
    const out: T[] = [];
    for (const x of items) {
      const r = each(x);
      if (!r.ok) return { ok: false, expected: `${expected}; ${JSON.stringify(x)} is not ${item.expected}` };
      out.push(r.value);
    }
    return ok(out);
  };
  return {
    expected,
    check: (v) => (Array.isArray(v) ? all(v, (x) => item.check(x)) : { ok: false, expected }),
    parse: (t) =>
      all(
        t
          .split(",")
          .map((s) => s.trim())
          .filter((s) => s.length > 0),
        (x) => item.parse(x as string),
      ),
  };
}
