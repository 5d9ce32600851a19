/**
 * The `routing.primitives` config field: MABP's primitives `w, p, P` per queue key, given in the config
 * file only (a structured value: environment variables and flags cannot carry it, and are refused with
 * a message saying so). Checked strictly — unknown keys, queue keys that no routing task has, work <= 0,
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
import { z } from "zod";
import { QUEUE_KEY_PATTERN } from "../../routing/configured-primitives.js";
import type { PrimitivesConfig } from "../../routing/configured-primitives.js";
import { structuredField } from "./fields.js";

const queueKeyText = "a queue key requestClass/stage (e.g. rag/0)";

/** A strict object whose wrong type reads as `expected`. */
function mapping<S extends z.core.$ZodLooseShape>(shape: S, expected: string) {
  return z.strictObject(shape, { error: (iss) => (iss.code === "invalid_type" ? expected : undefined) });
}

const queueKey = z.string().regex(QUEUE_KEY_PATTERN, { error: queueKeyText });

const probability = "a probability, a number >= 0 <= 1";
const successor = mapping(
  {
    key: queueKey,
    p: z.number({ error: probability }).min(0, { error: probability }).max(1, { error: probability }),
  },
  "an object { key, p }",
);

const successors = z
  .array(successor, { error: "a list of { key, p }" })
  .superRefine((list, ctx) => {
    const seen = new Set<string>();
    list.forEach((s, i) => {
      if (seen.has(s.key))
        ctx.addIssue({ code: "custom", message: "each key at most once", path: [i, "key"], input: s.key });
      seen.add(s.key);
    });
    if (list.reduce((sum, s) => sum + s.p, 0) > 1 + 1e-9)
      ctx.addIssue({
        code: "custom",
        message: "probabilities summing to at most 1 (the rest exits)",
        input: list,
      });
  })
  .default([]);

const workText = "a number > 0 (work per completed unit)";
const penaltyText = "a finite number (penalty per completed unit)";
const entryText = "an entry { work, penalty, successors? }";
const entryShape = {
  work: z.number({ error: workText }).gt(0, { error: workText }),
  penalty: z.number({ error: penaltyText }),
  successors,
};
const entry = mapping(entryShape, entryText);
const requiredEntry = z.strictObject(entryShape, {
  error: (iss) =>
    iss.code !== "invalid_type"
      ? undefined
      : iss.input === undefined
        ? `${entryText} (noReuse is required)`
        : entryText,
});

const spec = mapping(
  {
    noReuse: requiredEntry,
    reuse: entry.optional(),
    byContext: z
      .record(z.string().min(1, { error: "a non-empty context name" }), entry, {
        error: "a mapping of context → { work, penalty, successors? }",
      })
      .optional(),
  },
  "an object { noReuse, reuse?, byContext? }",
);

const expected = "a mapping of queue key (class/stage) → { noReuse, reuse?, byContext? }";

// Typed as the routing module's own `PrimitivesConfig` (which leaves `successors` optional).
const table = z.record(queueKey, spec, { error: expected }).transform((t): PrimitivesConfig => t);

export const primitivesField = structuredField(table, {
  expected: `${expected}; config file only`,
  fileOnly: "a primitive table",
});
