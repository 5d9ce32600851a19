/**
 * The `routing.primitives` config field: MABP's primitives `w, p, P` per queue key, given in the config
 * file (a structured value: environment variables and flags cannot carry it, and are refused with a
 * message saying so). Checked strictly — unknown keys, queue keys that no routing task has, work <= 0,
 * probabilities outside 0..1 or summing past 1 — each fault named by its place in the table, e.g.
 * `routing.primitives["rag/0"].noReuse.successors[0].p`.
 *
 * @example
 * routing:
 *   policy: mabp
 *   primitives:
 *     rag/0:
 *       noReuse: { work: 4, penalty: 4, successors: [{ key: rag/1, p: 0.6 }] }
 *       reuse: { work: 1, penalty: 1, successors: [{ key: rag/1, p: 0.1 }] }
 *     rag/1: { noReuse: { work: 2, penalty: 2 } }
 */
import { QUEUE_KEY_PATTERN } from "../../routing/configured-primitives.js";
import type {
  PrimitiveEntryConfig,
  PrimitiveSpecConfig,
  PrimitivesConfig,
} from "../../routing/configured-primitives.js";
import type { Check, FieldType } from "./field-types.js";

/** A fault at `at` inside the table, thrown up to the field's `check` (which returns it). */
class Fault extends Error {
  constructor(
    readonly expected: string,
    readonly at: string,
    readonly value: unknown,
  ) {
    super(`${at}: expected ${expected}`);
  }
}

const queueKeyText = "a queue key requestClass/stage (e.g. rag/0)";

function mapping(value: unknown, at: string, expected: string): Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw new Fault(expected, at, value);
  return value as Record<string, unknown>;
}

function onlyKeys(obj: Record<string, unknown>, known: readonly string[], at: string): void {
  for (const k of Object.keys(obj)) {
    if (!known.includes(k)) throw new Fault(`no such key (known: ${known.join(", ")})`, `${at}.${k}`, obj[k]);
  }
}

function finite(value: unknown, at: string, expected: string, ok: (n: number) => boolean): number {
  if (typeof value !== "number" || !Number.isFinite(value) || !ok(value))
    throw new Fault(expected, at, value);
  return value;
}

function successors(value: unknown, at: string): { key: string; p: number }[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw new Fault("a list of { key, p }", at, value);
  const out: { key: string; p: number }[] = [];
  let mass = 0;
  for (const [i, raw] of value.entries()) {
    const s = mapping(raw, `${at}[${i}]`, "an object { key, p }");
    onlyKeys(s, ["key", "p"], `${at}[${i}]`);
    if (typeof s.key !== "string" || !QUEUE_KEY_PATTERN.test(s.key)) {
      throw new Fault(queueKeyText, `${at}[${i}].key`, s.key);
    }
    if (out.some((o) => o.key === s.key)) throw new Fault("each key at most once", `${at}[${i}].key`, s.key);
    const p = finite(s.p, `${at}[${i}].p`, "a probability, a number >= 0 <= 1", (n) => n >= 0 && n <= 1);
    mass += p;
    out.push({ key: s.key, p });
  }
  if (mass > 1 + 1e-9) {
    throw new Fault("probabilities summing to at most 1 (the rest exits)", at, value);
  }
  return out;
}

function entry(value: unknown, at: string): PrimitiveEntryConfig {
  const e = mapping(value, at, "an object { work, penalty, successors? }");
  onlyKeys(e, ["work", "penalty", "successors"], at);
  return {
    work: finite(e.work, `${at}.work`, "a number > 0 (work per completed unit)", (n) => n > 0),
    penalty: finite(e.penalty, `${at}.penalty`, "a finite number (penalty per completed unit)", () => true),
    successors: successors(e.successors, `${at}.successors`),
  };
}

function spec(value: unknown, at: string): PrimitiveSpecConfig {
  const s = mapping(value, at, "an object { noReuse, reuse?, byContext? }");
  onlyKeys(s, ["noReuse", "reuse", "byContext"], at);
  if (s.noReuse === undefined) {
    throw new Fault(
      "an entry { work, penalty, successors? } (noReuse is required)",
      `${at}.noReuse`,
      undefined,
    );
  }
  let byContext: Record<string, PrimitiveEntryConfig> | undefined;
  if (s.byContext !== undefined) {
    const m = mapping(
      s.byContext,
      `${at}.byContext`,
      "a mapping of context → { work, penalty, successors? }",
    );
    byContext = {};
    for (const [context, e] of Object.entries(m)) {
      if (context === "") throw new Fault("a non-empty context name", `${at}.byContext[""]`, e);
      byContext[context] = entry(e, `${at}.byContext[${JSON.stringify(context)}]`);
    }
  }
  return {
    noReuse: entry(s.noReuse, `${at}.noReuse`),
    ...(s.reuse !== undefined && { reuse: entry(s.reuse, `${at}.reuse`) }),
    ...(byContext !== undefined && { byContext }),
  };
}

const expected = "a mapping of queue key (class/stage) → { noReuse, reuse?, byContext? }";

export const primitivesField: FieldType<PrimitivesConfig> = {
  expected: `${expected} (config file only)`,
  check(value): Check<PrimitivesConfig> {
    try {
      const table = mapping(value, "", expected);
      const out: Record<string, PrimitiveSpecConfig> = {};
      for (const [key, raw] of Object.entries(table)) {
        const at = `[${JSON.stringify(key)}]`;
        if (!QUEUE_KEY_PATTERN.test(key)) throw new Fault(queueKeyText, at, key);
        out[key] = spec(raw, at);
      }
      return { ok: true, value: out };
    } catch (err) {
      if (err instanceof Fault) return { ok: false, expected: err.expected, at: err.at, value: err.value };
      throw err;
    }
  },
  parse: () => ({
    ok: false,
    expected: "a primitive table given in the config file (JSON or YAML); env and flags cannot carry it",
  }),
};
