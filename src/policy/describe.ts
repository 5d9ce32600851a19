/**
 * Human-readable accounts, printed from `REASONS`: of one classification (the condition that decided
 * it, with the numbers, and what the coordinator does — `tailswarm explain`, span events, logs), and of
 * the whole rule (the table the README shows and `tailswarm explain --reasons` prints).
 */
import { REASONS } from "./reasons.js";
import type { Classification, Reason } from "./types.js";

export interface ClassificationAccount {
  /** The inequality that decided, with the numbers, e.g. `budget 400 ms > p99 340 ms + abandon cost 20 ms = 360 ms`. */
  readonly inequality: string;
  /** What the coordinator does in this mode, one sentence. */
  readonly effect: string;
}

/**
 * @example
 * describeClassification(classify(90, 22, 340, 0, true)).inequality;
 * // "p50 22 ms < budget 90 ms <= p99 340 ms + abandon cost 0 ms = 340 ms"
 */
export function describeClassification(c: Classification): ClassificationAccount {
  const spec = REASONS[c.reason];
  return { inequality: spec.inequality(c), effect: spec.effect };
}

/** Every reason as a Markdown table: when it is given, the mode, the reason, what the coordinator does. */
export function formatReasonTable(): string {
  const rows = (Object.keys(REASONS) as Reason[]).map((reason) => {
    const r = REASONS[reason];
    return `| ${r.when} | **${r.mode}** | \`${reason}\` | ${r.effect} |`;
  });
  return ["| when | mode | reason | what the coordinator does |", "|---|---|---|---|", ...rows, ""].join(
    "\n",
  );
}
