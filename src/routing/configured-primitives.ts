/**
 * Primitives given in the node's configuration (`routing.primitives`): plain data, as a JSON or YAML
 * file holds it, turned into a `PrimitiveTable`. Per-object entries are named by the context a
 * `context` task carries (`byContext`), and keyed by that context's signature under the queue key's
 * request class — the compatibility signature the router looks up when a peer holds the object.
 *
 * @example
 * const table = configuredPrimitives({
 *   "rag/0": {
 *     noReuse: { work: 4, penalty: 4, successors: [{ key: "rag/1", p: 0.6 }] },
 *     reuse: { work: 1, penalty: 1, successors: [{ key: "rag/1", p: 0.1 }] },
 *     byContext: { c17: { work: 0.5, penalty: 0.5 } },
 *   },
 *   "rag/1": { noReuse: { work: 2, penalty: 2 } },
 * });
 */
import { contextSignature } from "./context-task.js";
import { PrimitiveTable } from "./primitives.js";
import type { PrimitiveEntry, PrimitiveSpec } from "./primitives.js";

/** One entry as configured: `successors` may be left out (every completed unit exits). */
export interface PrimitiveEntryConfig {
  readonly work: number;
  readonly penalty: number;
  readonly successors?: readonly { readonly key: string; readonly p: number }[];
}

/** The primitives of one queue key as configured. */
export interface PrimitiveSpecConfig {
  /** Without a compatible resident object (and for any object without an entry of its own). */
  readonly noReuse: PrimitiveEntryConfig;
  /** With any compatible resident object. Default: `noReuse`. */
  readonly reuse?: PrimitiveEntryConfig;
  /** With the named context resident: overrides `reuse` for that object. */
  readonly byContext?: Readonly<Record<string, PrimitiveEntryConfig>>;
}

/** `routing.primitives`: queue key (`class/stage`) → its primitives. */
export type PrimitivesConfig = Readonly<Record<string, PrimitiveSpecConfig>>;

/** Queue keys as the daemon's routing tasks name them: `requestClass/stage`. */
export const QUEUE_KEY_PATTERN = /^(.+)\/(0|[1-9][0-9]*)$/;

function entry(e: PrimitiveEntryConfig): PrimitiveEntry {
  return { work: e.work, penalty: e.penalty, successors: (e.successors ?? []).map((s) => ({ ...s })) };
}

/** The table of a (validated) configuration; throws INVALID_CONFIG naming the entry if it is not valid. */
export function configuredPrimitives(config: PrimitivesConfig): PrimitiveTable {
  const specs: Record<string, PrimitiveSpec> = {};
  for (const [key, spec] of Object.entries(config)) {
    const requestClass = QUEUE_KEY_PATTERN.exec(key)?.[1] ?? key;
    const bySignature = new Map<number, PrimitiveEntry>();
    for (const [context, e] of Object.entries(spec.byContext ?? {})) {
      bySignature.set(contextSignature(requestClass, context), entry(e));
    }
    specs[key] = {
      noReuse: entry(spec.noReuse),
      ...(spec.reuse !== undefined && { reuse: entry(spec.reuse) }),
      ...(bySignature.size > 0 && { bySignature }),
    };
  }
  return new PrimitiveTable(specs);
}
