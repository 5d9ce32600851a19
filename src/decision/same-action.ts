import { isDeepStrictEqual } from "node:util";

/** Two actions are the same when they are identical, or structurally equal (caller-defined action objects). */
export function sameAction(a: unknown, b: unknown): boolean {
  return Object.is(a, b) || (typeof a === "object" && typeof b === "object" && isDeepStrictEqual(a, b));
}
