/** Commodities `c = (r, k, z)` and their queue keys. */
import type { Commodity } from "./types.js";

/**
 * Build a commodity; the queue key is `requestClass/stage`.
 *
 * @example
 * const c = commodity("rag", 1, "cluster-17"); // c.queueKey === "rag/1"
 */
export function commodity(requestClass: string, stage: number, stateType: string): Commodity {
  return { requestClass, stage, stateType, queueKey: queueKey(requestClass, stage) };
}

/** The queue key of `(requestClass, stage)`. */
export function queueKey(requestClass: string, stage: number): string {
  return `${requestClass}/${stage}`;
}
