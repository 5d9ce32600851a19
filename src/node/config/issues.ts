/**
 * zod's issues in the one message style, `field: got X (from SOURCE), expected Y`: the field as a
 * dotted path with `[i]` for list items and `["key"]` for keys of a table, the value found there
 * (bounded by `showValue`), where it came from, and the expectation the schema's block states. An
 * unknown key names the known ones and the nearest of them.
 */
import type { z } from "zod";
import { expectation } from "../../errors.js";
import { didYouMean } from "../../util/did-you-mean.js";
import { inner, objectOf } from "./fields.js";

type Path = readonly PropertyKey[];

/**
 * Where the value at a path came from: a label (`file x.yaml`, `env TAILSWARM_X`), for a value given
 * as text the text, and a note to add to the expectation (e.g. the spellings of a boolean in env).
 */
export type SourceOf = (path: Path) => {
  readonly label?: string;
  readonly text?: string;
  readonly note?: string;
};

function defType(s: z.ZodType): string {
  return (s.def as { type: string }).type;
}

/** The schema that validates what is inside `s` (through wrappers, preprocessing and transforms). */
function core(s: z.ZodType): z.ZodType {
  let cur = s;
  for (let i = 0; i < 16; i++) {
    const wrapped = inner(cur);
    if (wrapped !== undefined) {
      cur = wrapped;
      continue;
    }
    if (defType(cur) === "pipe") {
      const def = cur.def as unknown as { in: z.ZodType; out: z.ZodType };
      cur = defType(def.in) === "transform" ? def.out : def.in;
      continue;
    }
    break;
  }
  return cur;
}

/** The child schema at `key` of `s`, when `s` is an object, a record or an array. */
function child(s: z.ZodType, key: PropertyKey): z.ZodType | undefined {
  const c = core(s);
  const type = defType(c);
  if (type === "object") return (objectOf(c)?.shape as Record<string, z.ZodType>)[String(key)];
  if (type === "record") return (c.def as unknown as { valueType: z.ZodType }).valueType;
  if (type === "array") return (c.def as unknown as { element: z.ZodType }).element;
  return undefined;
}

/** `routing.primitives["rag/0"].successors[0].p`: keys of tables in brackets, list items by index. */
export function fieldName(schema: z.ZodType, path: Path): string {
  let out = "";
  let s: z.ZodType | undefined = schema;
  for (const key of path) {
    const table = s !== undefined && defType(core(s)) === "record";
    if (typeof key === "number") out += `[${key}]`;
    else if (table) out += `[${JSON.stringify(String(key))}]`;
    else out += out === "" ? String(key) : `.${String(key)}`;
    s = s === undefined ? undefined : child(s, key);
  }
  return out;
}

function valueAt(input: unknown, path: Path): unknown {
  let v = input;
  for (const key of path) {
    if (typeof v !== "object" || v === null) return undefined;
    v = (v as Record<PropertyKey, unknown>)[key];
  }
  return v;
}

/** Keys known to the object schema at `path`. */
function knownKeys(schema: z.ZodType, path: Path): string[] {
  let s: z.ZodType | undefined = schema;
  for (const key of path) s = s === undefined ? undefined : child(s, key);
  const obj = s === undefined ? undefined : objectOf(core(s));
  return obj === undefined ? [] : Object.keys(obj.shape);
}

/** One line per problem (an unknown-keys issue gives one line per key). */
export function describeIssues(
  schema: z.ZodType,
  issues: readonly z.core.$ZodIssue[],
  input: unknown,
  sourceOf: SourceOf,
): string[] {
  const lines: string[] = [];
  for (const issue of issues) {
    const path = issue.path;
    const from = sourceOf(path);
    if (issue.code === "unrecognized_keys") {
      const known = knownKeys(schema, path);
      for (const key of issue.keys) {
        const near = didYouMean(key, known);
        const hint = near === undefined ? "" : ` (did you mean ${near}?)`;
        const where = path.length === 0 ? "" : ` under ${fieldName(schema, path)}`;
        lines.push(
          expectation(
            fieldName(schema, [...path, key]),
            valueAt(input, [...path, key]),
            `a known key${hint}; known keys${where}: ${known.join(", ")}`,
            from.label,
          ),
        );
      }
      continue;
    }
    let expected = issue.message;
    if (issue.code === "invalid_key") expected = issue.issues[0]?.message ?? expected;
    // Text from env or a flag is shown as given, not as the number or list it was read as.
    const got = from.text ?? ("input" in issue ? issue.input : valueAt(input, path));
    lines.push(expectation(fieldName(schema, path), got, `${expected}${from.note ?? ""}`, from.label));
  }
  return lines;
}
