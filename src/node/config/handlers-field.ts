/**
 * The `handlers` config field: a list of `{ kind, use?, options? }` in files (`use` defaults to
 * `kind`), and `kind[=use]` items, comma-separated, in env and flags (no options there).
 */
import type { Check, FieldType } from "./field-types.js";
import type { HandlerEntry } from "./types.js";

const KIND = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
const kindExpected = "a task kind (letters, digits, . _ -)";

function fail(expected: string, at: string, value: unknown): Check<HandlerEntry[]> {
  return { ok: false, expected, at, value };
}

function unique(entries: HandlerEntry[]): Check<HandlerEntry[]> {
  const seen = new Set<string>();
  for (const [i, e] of entries.entries()) {
    if (seen.has(e.kind)) return fail("each kind at most once", `[${i}].kind`, e.kind);
    seen.add(e.kind);
  }
  return { ok: true, value: entries };
}

export const handlersField: FieldType<HandlerEntry[]> = {
  expected: "a list of { kind, use?, options? } (env/flags: kind[=use],...)",
  check(value) {
    if (!Array.isArray(value)) return fail(this.expected, "", value);
    const out: HandlerEntry[] = [];
    for (const [i, raw] of value.entries()) {
      if (typeof raw === "string") {
        const parsed = this.parse(raw);
        if (!parsed.ok) return { ...parsed, at: `[${i}]${parsed.at?.replace(/^\[0\]/, "") ?? ""}` };
        out.push(...parsed.value);
        continue;
      }
      if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
        return fail("an object { kind, use?, options? } or a handler name", `[${i}]`, raw);
      }
      const e = raw as Record<string, unknown>;
      for (const key of Object.keys(e)) {
        if (!["kind", "use", "options"].includes(key)) {
          return fail("no such key (known: kind, use, options)", `[${i}].${key}`, e[key]);
        }
      }
      if (typeof e.kind !== "string" || !KIND.test(e.kind)) return fail(kindExpected, `[${i}].kind`, e.kind);
      const use = e.use ?? e.kind;
      if (typeof use !== "string" || use.length === 0) {
        return fail("a shipped handler name or a module path", `[${i}].use`, e.use);
      }
      out.push({ kind: e.kind, use, ...(e.options !== undefined && { options: e.options }) });
    }
    return unique(out);
  },
  parse(text) {
    const out: HandlerEntry[] = [];
    const items = text
      .split(",")
      .map((s) => s.trim())
      .filter((s) => s.length > 0);
    for (const [i, item] of items.entries()) {
      const eq = item.indexOf("=");
      const kind = eq < 0 ? item : item.slice(0, eq);
      const use = eq < 0 ? item : item.slice(eq + 1);
      if (!KIND.test(kind)) return fail(kindExpected, `[${i}].kind`, kind);
      if (use.length === 0) return fail("a shipped handler name or a module path", `[${i}].use`, use);
      out.push({ kind, use });
    }
    return unique(out);
  },
};
