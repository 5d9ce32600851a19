/**
 * The `handlers` config field: a list of `{ kind, use?, options? }` (`use` defaults to `kind`) or of
 * `kind[=use]` strings; in env and flags, and as a YAML scalar (`handlers: vote`), the strings
 * comma-separated (no options there). Each kind at most once.
 */
import { z } from "zod";
import { info, listField } from "./fields.js";

const KIND = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
const kindExpected = "a task kind (letters, digits, . _ -)";
const useExpected = "a shipped handler name or a module path";
const entryExpected = "an object { kind, use?, options? } or a handler name";

/** `kind[=use]` as the entry it names. */
function fromText(item: string): { kind: string; use: string } {
  const eq = item.indexOf("=");
  return eq < 0 ? { kind: item, use: item } : { kind: item.slice(0, eq), use: item.slice(eq + 1) };
}

const entry = info(
  z.preprocess(
    (v) => (typeof v === "string" ? fromText(v.trim()) : v),
    z
      .strictObject(
        {
          kind: z.string({ error: kindExpected }).regex(KIND, { error: kindExpected }),
          use: z.string({ error: useExpected }).min(1, { error: useExpected }).optional(),
          options: z.unknown().optional(),
        },
        { error: (iss) => (iss.code === "invalid_type" ? entryExpected : undefined) },
      )
      .transform((e) => ({
        kind: e.kind,
        use: e.use ?? e.kind,
        ...(e.options !== undefined && { options: e.options }),
      })),
  ),
  { expected: entryExpected, kind: "structured", alsoText: "kind[=use]" },
);

const expected = "a list of { kind, use?, options? } (env/flags: kind[=use],...)";

export const handlersField = info(
  listField(entry, expected).superRefine((entries, ctx) => {
    const seen = new Set<string>();
    entries.forEach((e, i) => {
      if (seen.has(e.kind))
        ctx.addIssue({ code: "custom", message: "each kind at most once", path: [i, "kind"], input: e.kind });
      seen.add(e.kind);
    });
  }),
  { expected, kind: "list", alsoText: "kind[=use] items, comma-separated" },
);

export type HandlerEntry = z.output<typeof entry>;
