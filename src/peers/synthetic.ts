/**
 * The `synthetic` workload: waits as long as a seeded latency model says (src/peers/latency-model.ts),
 * then answers by itself (`{ queueMs, serviceMs }`) or by running the handler it wraps (e.g. `vote`). It
 * stops when its signal aborts (abandon, deadline, shutdown): the time spent until then is the work the
 * peer lost.
 *
 * `replayShift: true` (testbeds) lets a payload carry `modelClockShiftMs` (0..60000), reading the model at
 * `now − shift`: the staggered copies of one request sent to several policies then all meet the gateway
 * state of the request's own moment, without landing on the host at the same instant.
 *
 * @example
 * handlers:
 *   - kind: vote
 *     use: synthetic
 *     options: { seed: 1, body: { medianMs: 8, sigma: 0.4 }, wrap: { use: vote } }
 */
import { sleep } from "../clock/clock.js";
import { TailswarmError, invalid } from "../errors.js";
import type { TaskHandler } from "../mesh/handler.js";
import type { HandlerEnv, HandlerFactory } from "./handler.js";
import { numberRange } from "../util/range.js";
import { createLatencyModel, LATENCY_MODEL_DEFAULTS, LATENCY_MODEL_RANGES } from "./latency-model.js";
import type { GatewayQueueing, LatencyModelOptions, ParetoTail } from "./latency-model.js";
import { numberOption, optionError, optionsObject, seedOption, stringOption } from "./options.js";
import { hash32 } from "../util/hash.js";
import { createRng, mixSeed, seedOf } from "./rng.js";

/** Validates the latency part of synthetic options (also usable by the testbed). */
export function parseLatencyModelOptions(raw: unknown, path: string): LatencyModelOptions {
  const opts = optionsObject(raw, path, ["seed", "body", "tail", "gateway", "maxMs", "wrap", "replayShift"]);
  const D = LATENCY_MODEL_DEFAULTS;
  const R = LATENCY_MODEL_RANGES;
  const b = optionsObject(opts.body, `${path}.body`, ["medianMs", "sigma"]);
  const body = {
    medianMs: numberOption(b, "medianMs", `${path}.body`, R.body.medianMs, D.body.medianMs),
    sigma: numberOption(b, "sigma", `${path}.body`, R.body.sigma, D.body.sigma),
  };
  let tail: ParetoTail | undefined;
  if (opts.tail !== undefined) {
    const t = optionsObject(opts.tail, `${path}.tail`, ["probability", "scaleMs", "shape"]);
    tail = {
      probability: numberOption(t, "probability", `${path}.tail`, R.tail.probability, D.tail.probability),
      scaleMs: numberOption(t, "scaleMs", `${path}.tail`, R.tail.scaleMs, D.tail.scaleMs),
      shape: numberOption(t, "shape", `${path}.tail`, R.tail.shape, D.tail.shape),
    };
  }
  let gateway: GatewayQueueing | undefined;
  if (opts.gateway !== undefined) {
    const gp = `${path}.gateway`;
    const g = optionsObject(opts.gateway, gp, ["group", "episodesPerSecond", "durationMs"]);
    const group = stringOption(g, "group", gp);
    if (group === undefined) throw optionError(`${gp}.group`, undefined, "a non-empty string");
    const d = optionsObject(g.durationMs, `${gp}.durationMs`, ["min", "max"]);
    const dm = D.gateway.durationMs;
    const min = numberOption(d, "min", `${gp}.durationMs`, R.gateway.durationMs, dm.min);
    const max = numberOption(d, "max", `${gp}.durationMs`, numberRange(min), Math.max(min, dm.max));
    gateway = {
      group,
      episodesPerSecond: numberOption(
        g,
        "episodesPerSecond",
        gp,
        R.gateway.episodesPerSecond,
        D.gateway.episodesPerSecond,
      ),
      durationMs: { min, max },
    };
  }
  return {
    seed: seedOption(opts, "seed", path) ?? 0,
    body,
    ...(tail && { tail }),
    ...(gateway && { gateway }),
    maxMs: numberOption(opts, "maxMs", path, R.maxMs, D.maxMs),
  };
}

async function wrapped(raw: unknown, env: HandlerEnv): Promise<TaskHandler | undefined> {
  if (raw === undefined) return undefined;
  const path = `${env.path}.wrap`;
  const w = optionsObject(raw, path, ["use", "options"]);
  const use = stringOption(w, "use", path);
  if (use === undefined) throw optionError(`${path}.use`, undefined, "a handler name or module path");
  return env.load({ kind: env.kind, use, options: w.options }, `${path}.options`);
}

export const createSyntheticHandler: HandlerFactory = async (raw, env) => {
  const modelOptions = parseLatencyModelOptions(raw, env.path);
  const model = createLatencyModel(modelOptions);
  const inner = await wrapped((raw as { wrap?: unknown } | undefined)?.wrap, env);
  // Per-request draws: one stream per (seed, node) so peers sharing a seed still differ.
  const rng = createRng(mixSeed(seedOf(modelOptions.seed), hash32(env.nodeId)));
  const clock = env.clock;
  const replayShift = (raw as { replayShift?: unknown } | undefined)?.replayShift;
  if (replayShift !== undefined && typeof replayShift !== "boolean")
    throw optionError(`${env.path}.replayShift`, replayShift, "true or false");

  return {
    kind: env.kind,
    async handle(task, ctx) {
      ctx.signal.throwIfAborted();
      const start = clock.now();
      const s = model.sample(replayShift === true ? start - clockShiftOf(task.payload) : start, rng);
      const left = ctx.deadline - start;
      if (s.totalMs >= left) {
        await sleep(clock, left, ctx.signal);
        throw new TailswarmError(
          "DEADLINE_EXCEEDED",
          `synthetic: modelled latency ${s.totalMs.toFixed(1)} ms exceeds the ${left.toFixed(1)} ms left before the deadline`,
        );
      }
      await sleep(clock, s.totalMs, ctx.signal);
      if (inner !== undefined) return inner.handle(task, ctx);
      return { queueMs: s.queueMs, serviceMs: s.serviceMs };
    },
  };
};

const MAX_SHIFT_MS = 60_000;

/** `payload.modelClockShiftMs`, 0 when absent; a bad value is the caller's INVALID_ARGUMENT. */
function clockShiftOf(payload: unknown): number {
  if (typeof payload !== "object" || payload === null) return 0;
  const v = (payload as { modelClockShiftMs?: unknown }).modelClockShiftMs;
  if (v === undefined) return 0;
  if (typeof v !== "number" || !Number.isFinite(v) || v < 0 || v > MAX_SHIFT_MS) {
    throw invalid("payload.modelClockShiftMs", v, `a number of ms >= 0 <= ${MAX_SHIFT_MS}`);
  }
  return v;
}
