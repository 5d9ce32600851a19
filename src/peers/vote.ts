/**
 * The `vote` workload: answers `{ question, options?, truth? }` as `{ vote }` (what quorum-vote parses).
 * A peer with `informed: true` answers `truth` (an event only some peers have seen yet); the others
 * answer their `stance`, else a seeded draw by `weights`, else a seeded uniform draw (deterministic per
 * seed, node and question). The slow-but-informed peers behind a gateway of docs/background.md: give
 * them `informed: true` and a synthetic latency with that gateway, the others a stance.
 *
 * @example
 * handlers:
 *   - kind: vote
 *     use: vote
 *     options: { stance: "hold", informed: true, seed: 7 }
 */
import type { TailswarmError } from "../errors.js";
import { invalid } from "../errors.js";
import type { HandlerFactory } from "./handler.js";
import {
  booleanOption,
  checkNumber,
  optionError,
  optionsObject,
  seedOption,
  stringOption,
} from "./options.js";
import { hash32 } from "../util/hash.js";
import { createRng, mixSeed, seedOf } from "./rng.js";

export interface VotePayload {
  readonly question: string;
  readonly options?: readonly string[];
  readonly truth?: string;
}

function badPayload(field: string, value: unknown, expected: string): TailswarmError {
  return invalid(`payload.${field}`, value, expected);
}

/** Validates a vote payload; throws INVALID_ARGUMENT naming the field. */
export function parseVotePayload(raw: unknown): VotePayload {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    throw invalid("payload", raw, "an object { question, options?, truth? }");
  }
  const p = raw as Record<string, unknown>;
  if (typeof p.question !== "string" || p.question.length === 0) {
    throw badPayload("question", p.question, "a non-empty string");
  }
  let options: string[] | undefined;
  if (p.options !== undefined) {
    const ok =
      Array.isArray(p.options) &&
      p.options.length > 0 &&
      p.options.every((o) => typeof o === "string" && o.length > 0) &&
      new Set(p.options).size === p.options.length;
    if (!ok) throw badPayload("options", p.options, "a non-empty array of distinct non-empty strings");
    options = p.options as string[];
  }
  if (p.truth !== undefined && (typeof p.truth !== "string" || p.truth.length === 0)) {
    throw badPayload("truth", p.truth, "a non-empty string");
  }
  const truth = p.truth;
  return { question: p.question, ...(options && { options }), ...(truth !== undefined && { truth }) };
}

export const createVoteHandler: HandlerFactory = (raw, env) => {
  const opts = optionsObject(raw, env.path, ["stance", "weights", "informed", "seed"]);
  const stance = stringOption(opts, "stance", env.path);
  const informed = booleanOption(opts, "informed", env.path, false);
  const seed = seedOf(seedOption(opts, "seed", env.path) ?? 0);
  let weights: Map<string, number> | undefined;
  if (opts.weights !== undefined) {
    const w = opts.weights;
    if (typeof w !== "object" || w === null || Array.isArray(w)) {
      throw optionError(`${env.path}.weights`, w, "an object of option → weight >= 0");
    }
    weights = new Map();
    for (const [k, v] of Object.entries(w))
      weights.set(k, checkNumber(v, `${env.path}.weights.${k}`, { min: 0 }));
    if ([...weights.values()].every((v) => v === 0)) {
      throw optionError(`${env.path}.weights`, opts.weights, "at least one weight > 0");
    }
  }
  const nodeKey = hash32(env.nodeId);

  const choose = (payload: VotePayload): string => {
    const options = payload.options ?? ["yes", "no"];
    if (informed && payload.truth !== undefined) return payload.truth;
    if (stance !== undefined && (payload.options === undefined || options.includes(stance))) return stance;
    const rng = createRng(mixSeed(seed, nodeKey, hash32(payload.question)));
    const ws = options.map((o) => (weights === undefined ? 1 : (weights.get(o) ?? 0)));
    const total = ws.reduce((a, b) => a + b, 0);
    if (total <= 0) return options[Math.floor(rng.next() * options.length)] ?? options[0]!;
    let u = rng.next() * total;
    for (let i = 0; i < options.length; i++) {
      u -= ws[i]!;
      if (u < 0) return options[i]!;
    }
    return options[options.length - 1]!;
  };

  return {
    kind: env.kind,
    async handle(task, { signal }) {
      signal.throwIfAborted();
      return { vote: choose(parseVotePayload(task.payload)) };
    },
  };
};
