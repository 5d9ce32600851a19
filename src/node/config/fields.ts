/**
 * Building blocks of the config schemas (the node's, the testbed scenario's), on zod. Every block
 * carries the one text that says what it accepts (`expected`): it is the message of each of its
 * failed checks, so an error reads `field: got X (from SOURCE), expected <that text>`, and it is the
 * "value" column of docs/configuration.md. Ranges come from the library (src/util/range.ts), never
 * from a number written here.
 */
import { z } from "zod";
import { describeRange } from "../../util/range.js";
import type { NumberRange } from "../../util/range.js";

/** How env and flag text becomes a value of the field (files give typed values). */
export type FieldKind = "number" | "boolean" | "text" | "list" | "structured";

export interface FieldInfo {
  /** What the value must be, as errors and docs say it. */
  readonly expected: string;
  readonly kind: FieldKind;
  /** Given only in a config file (env variables and flags cannot carry it): what it is, e.g. `a primitive table`. */
  readonly fileOnly?: string;
  /** The default as docs show it, where its value would not say it well. */
  readonly shownDefault?: string;
  /** The default is computed at load (e.g. from the host name): the JSON Schema states none. */
  readonly computedDefault?: boolean;
  /** Also accepted as a string, read so (the JSON Schema says `anyOf` the two): what the string holds. */
  readonly alsoText?: string;
}

/** The metadata of every block, beside zod's own (which the JSON Schema export reads). */
export const fieldInfo = z.registry<FieldInfo>();

export function info<T extends z.ZodType>(schema: T, meta: FieldInfo): T {
  fieldInfo.add(schema, meta);
  return schema;
}

/** A number in `range`. */
export function rangeField(range: NumberRange): z.ZodNumber {
  const expected = describeRange(range);
  let s = z.number({ error: expected });
  if (range.integer) s = s.int({ error: expected });
  if (range.min !== undefined) s = s.min(range.min, { error: expected });
  if (range.above !== undefined) s = s.gt(range.above, { error: expected });
  if (range.max !== undefined) s = s.max(range.max, { error: expected });
  return info(s, { expected, kind: "number" });
}

export function boolField(): z.ZodBoolean {
  return info(z.boolean({ error: "true or false" }), { expected: "true or false", kind: "boolean" });
}

/** A non-empty string, matching `pattern` when given (`expected` says what the pattern means). */
export function textField(expected = "a non-empty string", pattern?: RegExp): z.ZodString {
  let s = z.string({ error: expected }).min(1, { error: expected });
  if (pattern !== undefined) s = s.regex(pattern, { error: expected });
  return info(s, { expected, kind: "text" });
}

export function oneOfField<const T extends readonly [string, ...string[]]>(
  values: T,
): z.ZodEnum<z.util.ToEnum<T[number]>> {
  const expected = `one of ${values.join(", ")}`;
  return info(z.enum(values, { error: expected }), { expected, kind: "text" });
}

const HOST_PORT = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9._-]+):(\d{1,5})$/;

/** host:port, with the host a name, an IPv4 address or a bracketed IPv6 address. */
export function isHostPort(v: string, allowZeroPort: boolean): boolean {
  const m = HOST_PORT.exec(v);
  if (m === null) return false;
  const port = Number(m[2]);
  return port <= 65535 && (allowZeroPort || port > 0);
}

export function hostPortField(allowZeroPort: boolean): z.ZodString {
  const expected = `host:port (port ${allowZeroPort ? "0" : "1"}-65535; IPv6 as [::1]:port)`;
  const s = z
    .string({ error: expected })
    .regex(HOST_PORT, { error: expected })
    .refine((v) => isHostPort(v, allowZeroPort), { error: expected });
  return info(s, { expected, kind: "text" });
}

/** Splits a comma-separated list, dropping empty items. */
export function splitList(text: string): string[] {
  return text
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

/**
 * A list of `item`: an array, or a comma-separated string (env and flags; a YAML scalar where a list
 * is expected, `handlers: vote`, means the list of that one item).
 */
export function listField<T extends z.ZodType>(item: T, expected?: string) {
  const text =
    expected ?? `a list of ${fieldInfo.get(item)?.expected ?? "items"} (comma-separated in env and flags)`;
  const s = z.preprocess((v) => (typeof v === "string" ? splitList(v) : v), z.array(item, { error: text }));
  return info(s, { expected: text, kind: "list", alsoText: "the items, comma-separated" });
}

/** A group of keys (`probe.*`): unknown keys are refused, the group may be left out. */
export function group<S extends z.core.$ZodLooseShape>(shape: S) {
  const expected = `a mapping with the keys ${Object.keys(shape).join(", ")}`;
  return z
    .strictObject(shape, { error: (iss) => (iss.code === "invalid_type" ? expected : undefined) })
    .prefault({} as never);
}

/** A structured value with its own `expected` text (validated by `schema`). */
export function structuredField<T extends z.ZodType>(schema: T, meta: Omit<FieldInfo, "kind">): T {
  // Registered on `schema` itself: a structured value's own parts keep their own metadata.
  return info(schema, { ...meta, kind: "structured" });
}

/** `schema` with its default shown in docs as `text`; `computed` when the value is computed at load. */
export function shownDefault<T extends z.ZodType>(schema: T, text: string, computed = false): T {
  const known = fieldInfo.get(schema);
  if (known === undefined) throw new Error("shownDefault: the schema has no field info");
  return info(schema, { ...known, shownDefault: text, ...(computed && { computedDefault: true }) });
}

/** The block's metadata, looking through defaults, optionals and descriptions. */
export function infoOf(schema: z.ZodType): FieldInfo | undefined {
  let s: z.ZodType | undefined = schema;
  for (let i = 0; s !== undefined && i < 8; i++) {
    const found = fieldInfo.get(s);
    if (found !== undefined) return found;
    s = inner(s);
  }
  return undefined;
}

/** The schema a wrapper (default, prefault, optional, nullable, readonly) wraps; undefined otherwise. */
export function inner(schema: z.ZodType): z.ZodType | undefined {
  const def = schema.def as { type: string; innerType?: z.ZodType };
  return ["default", "prefault", "optional", "nullable", "readonly", "nonoptional"].includes(def.type)
    ? def.innerType
    : undefined;
}

/** The object under any wrappers, when `schema` is one (a group of keys). */
export function objectOf(schema: z.ZodType): z.ZodObject | undefined {
  let s: z.ZodType | undefined = schema;
  while (s !== undefined && !(s instanceof z.ZodObject)) s = inner(s);
  return s;
}

/** The default value of a field, when it has one (computed ones are computed). */
export function defaultOf(schema: z.ZodType): unknown {
  let s: z.ZodType | undefined = schema;
  while (s !== undefined) {
    if (s instanceof z.ZodDefault) return (s.def as { defaultValue: unknown }).defaultValue;
    s = inner(s);
  }
  return undefined;
}
