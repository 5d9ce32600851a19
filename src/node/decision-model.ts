/**
 * The decision model of a `Coordinate` request: its `decision` name and JSON `options`; without a
 * name, the task kind's default (`context-result` for kind `context`, else `quorum-vote`).
 * - `quorum-vote` (also `quorum`, `vote`): options `{ options?, prior?, required?, weights? }`.
 *   The options default to the vote payload's `options`, else `["yes", "no"]`; the prior to "no"
 *   when it is an option, else the first option.
 * - `argmax-scores` (also `argmax`): options `{ actions, prior?, bounds: { min, max } }`.
 * - `context-result` (also `context`): options `{ prefer?: "first" | "verified" }`; the action is the
 *   served result of a context request (src/decision/context-result.ts).
 * A bad name or option → INVALID_ARGUMENT naming it.
 */
import { argmaxScores } from "../decision/argmax-scores.js";
import { CONTEXT_PREFERENCES, contextResult } from "../decision/context-result.js";
import { quorumVote } from "../decision/quorum-vote.js";
import type { DecisionModel } from "../decision/types.js";
import type { Task } from "../engine/transport.js";
import { clip, invalid } from "../errors.js";

const QUORUM = ["quorum-vote", "quorum", "vote"];
const ARGMAX = ["argmax-scores", "argmax"];
const CONTEXT = ["context-result", "context"];
export const DECISION_MODELS = [...QUORUM, ...ARGMAX, ...CONTEXT];

/** The model a task kind gets when the request names none. */
const DEFAULT_BY_KIND: ReadonlyMap<string, string> = new Map([["context", "context-result"]]);

function bad(field: string, value: unknown, expected: string): never {
  throw invalid(field, value, expected);
}

function asObject(raw: unknown): Record<string, unknown> {
  if (raw === undefined || raw === null) return {};
  if (typeof raw !== "object" || Array.isArray(raw)) bad("options", raw, "a JSON object");
  return raw as Record<string, unknown>;
}

function stringList(value: unknown): string[] | undefined {
  return Array.isArray(value) && value.length > 0 && value.every((v) => typeof v === "string")
    ? value
    : undefined;
}

export function decisionModel(
  name: string | undefined,
  rawOptions: unknown,
  task: Pick<Task, "kind" | "payload">,
): DecisionModel<unknown, unknown> {
  const opts = asObject(rawOptions);
  const payload = task.payload;
  const n = name ?? DEFAULT_BY_KIND.get(task.kind) ?? "quorum-vote";
  if (QUORUM.includes(n)) {
    for (const k of Object.keys(opts)) {
      if (!["options", "prior", "required", "weights"].includes(k)) {
        bad(`options.${clip(k)}`, opts[k], "no such option (quorum-vote: options, prior, required, weights)");
      }
    }
    const fromPayload = stringList((payload as { options?: unknown } | null)?.options);
    const options = opts.options === undefined ? (fromPayload ?? ["yes", "no"]) : stringList(opts.options);
    if (options === undefined) bad("options.options", opts.options, "a non-empty array of strings");
    const prior = opts.prior ?? (options.includes("no") ? "no" : options[0]);
    if (typeof prior !== "string") bad("options.prior", prior, "one of the options");
    return quorumVote({
      options,
      prior,
      ...(opts.required !== undefined && { required: opts.required as number }),
      ...(opts.weights !== undefined && { weights: opts.weights as Record<string, number> }),
    });
  }
  if (ARGMAX.includes(n)) {
    const actions = stringList(opts.actions);
    if (actions === undefined) bad("options.actions", opts.actions, "a non-empty array of strings");
    const bounds = opts.bounds as { min?: unknown; max?: unknown } | undefined;
    if (typeof bounds?.min !== "number" || typeof bounds.max !== "number") {
      bad("options.bounds", opts.bounds, "{ min: number, max: number }");
    }
    const prior = opts.prior ?? actions[0];
    if (typeof prior !== "string") bad("options.prior", prior, "one of the actions");
    return argmaxScores({ actions, prior, bounds: { min: bounds.min, max: bounds.max } });
  }
  if (CONTEXT.includes(n)) {
    for (const k of Object.keys(opts)) {
      if (k !== "prefer") bad(`options.${clip(k)}`, opts[k], "no such option (context-result: prefer)");
    }
    const prefer = opts.prefer ?? "first";
    if (!(CONTEXT_PREFERENCES as readonly unknown[]).includes(prefer)) {
      bad("options.prefer", opts.prefer, `one of ${CONTEXT_PREFERENCES.join(", ")}`);
    }
    return contextResult({ prefer: prefer as (typeof CONTEXT_PREFERENCES)[number] });
  }
  return bad("decision", n, `one of ${DECISION_MODELS.join(", ")}`);
}
