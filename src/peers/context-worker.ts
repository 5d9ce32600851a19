/**
 * The `context` workload: a worker whose work depends on resident context (the MABP paper's stateful
 * service). A request `{ requestClass, context }` has the memory object `contextSignature(requestClass,
 * context)`; its memory stage (queue `class/0`) costs 1 unit when the object is resident (a hit) and K
 * when not, and a miss creates it for the peer's retention policy to keep or not. A completed memory stage
 * creates a verifier job (queue `class/1`) with probability `verifyOnHit` or `verifyOnMiss`: memory shapes
 * the successor law. `capacity` jobs run at once, FIFO; past `maxBacklog` a request is refused
 * (RESOURCE_EXHAUSTED). `routingState()` advertises queues, resident signatures and memory.
 *
 * @example
 * handlers:
 *   - kind: context
 *     use: context
 *     options: { capacity: 2, unitMs: 4, missFactor: 4, memoryBudget: 12, retention: marginal-value }
 */
import type { Clock, TimerHandle } from "../clock/clock.js";
import { TailswarmError, invalid } from "../errors.js";
import type { HandlerContext, TaskHandler } from "../mesh/handler.js";
import type { RoutingAdvert } from "../routing/advert.js";
import { queueKey } from "../routing/commodity.js";
import { PrimitiveTable } from "../routing/primitives.js";
import type { PrimitiveSpec } from "../routing/primitives.js";
import type { RetentionPolicyName } from "../routing/retention.js";
import { contextSignature } from "../routing/context-task.js";
import { MAX_ADVERTISED_SIGNATURES } from "../routing/signature.js";
import { ContextMemory } from "./context-memory.js";
import type { HandlerFactory } from "./handler.js";
import { numberOption, optionError, optionsObject, seedOption, stringOption } from "./options.js";
import { createRng, mixSeed, seedOf } from "./rng.js";
import type { Rng } from "./rng.js";

export interface ContextWorkerOptions {
  /** Jobs served at once (μ in jobs). Default 2. */
  readonly capacity: number;
  /** ms per unit of work. Default 4. */
  readonly unitMs: number;
  /** K: work of a miss in units (a hit is 1). Default 4. */
  readonly missFactor: number;
  /** Units of a verifier job. Default 2. */
  readonly verifyWork: number;
  readonly verifyOnHit: number;
  readonly verifyOnMiss: number;
  /** Memory budget in size units. Default 12. */
  readonly memoryBudget: number;
  /** Object sizes: uniform integers in [min, max], fixed per signature. Default 1..1. */
  readonly objectSize: { readonly min: number; readonly max: number };
  readonly retention: RetentionPolicyName;
  /** Holding cost θ per size unit over the horizon (marginal-value retention). Default 0.5. */
  readonly holdingCost: number;
  /** Half-life of the demand counts and valuation horizon, ms. Default 10_000. */
  readonly reuseHalfLifeMs: number;
  /** Jobs waiting or in service at which requests are refused. Default 200. */
  readonly maxBacklog: number;
  readonly seed: number;
}

/** The answer of a `context` task. */
export interface ContextAnswer {
  readonly node: string;
  readonly queueKey: string;
  readonly hit: boolean;
  /** Work units spent on the request (memory stage plus verifier). */
  readonly work: number;
  /** Work units of the memory stage alone: 1 on a hit, K on a miss (what Learn-MABP profiles as `w`). */
  readonly stageWork: number;
  /** Downstream (verifier) jobs the request created: 0 or 1. */
  readonly downstream: number;
}

/** The handler with its advertised routing state. */
export interface ContextWorker extends TaskHandler {
  routingState(): RoutingAdvert;
  readonly memory: ContextMemory;
}

interface Job {
  readonly key: string;
  readonly units: number | undefined; // undefined: decided at start (hit or miss)
  readonly signal: AbortSignal;
  start(): number; // returns units
  done(): void;
  fail(reason: unknown): void;
  timer?: TimerHandle;
}

const RETENTION = ["marginal-value", "lru", "popularity"] as const;

export function parseContextWorkerOptions(raw: unknown, path: string): ContextWorkerOptions {
  const o = optionsObject(raw, path, [
    "capacity",
    "unitMs",
    "missFactor",
    "verifyWork",
    "verifyOnHit",
    "verifyOnMiss",
    "memoryBudget",
    "objectSize",
    "retention",
    "holdingCost",
    "reuseHalfLifeMs",
    "maxBacklog",
    "seed",
  ]);
  const retention = stringOption(o, "retention", path) ?? "marginal-value";
  if (!(RETENTION as readonly string[]).includes(retention)) {
    throw optionError(`${path}.retention`, retention, RETENTION.join(" | "));
  }
  const s = optionsObject(o.objectSize, `${path}.objectSize`, ["min", "max"]);
  const min = numberOption(s, "min", `${path}.objectSize`, { integer: true, min: 1 }, 1);
  const max = numberOption(s, "max", `${path}.objectSize`, { integer: true, min: min }, min);
  return {
    capacity: numberOption(o, "capacity", path, { integer: true, min: 1 }, 2),
    unitMs: numberOption(o, "unitMs", path, { above: 0 }, 4),
    missFactor: numberOption(o, "missFactor", path, { min: 1 }, 4),
    verifyWork: numberOption(o, "verifyWork", path, { above: 0 }, 2),
    verifyOnHit: numberOption(o, "verifyOnHit", path, { min: 0, max: 1 }, 0.1),
    verifyOnMiss: numberOption(o, "verifyOnMiss", path, { min: 0, max: 1 }, 0.6),
    memoryBudget: numberOption(o, "memoryBudget", path, { min: 0 }, 12),
    objectSize: { min, max },
    retention: retention as RetentionPolicyName,
    holdingCost: numberOption(o, "holdingCost", path, { min: 0 }, 0.5),
    reuseHalfLifeMs: numberOption(o, "reuseHalfLifeMs", path, { above: 0 }, 10_000),
    maxBacklog: numberOption(o, "maxBacklog", path, { integer: true, min: 1 }, 200),
    seed: seedOf(seedOption(o, "seed", path) ?? 1),
  };
}

function parsePayload(raw: unknown): { requestClass: string; context: string } {
  const p = (typeof raw === "object" && raw !== null ? raw : {}) as Record<string, unknown>;
  if (typeof p.requestClass !== "string" || p.requestClass === "" || typeof p.context !== "string") {
    throw invalid("payload", raw, "{ requestClass: non-empty string, context: string }");
  }
  return { requestClass: p.requestClass, context: p.context };
}

/** Builds a context worker (the shipped handler `context`). */
export function createContextWorker(
  options: ContextWorkerOptions,
  nodeId: string,
  clock: Clock,
): ContextWorker {
  const o = options;
  const rng: Rng = createRng(mixSeed(o.seed, seedOf(nodeId)));
  const span = o.objectSize.max - o.objectSize.min + 1;
  const memory = new ContextMemory({
    budget: o.memoryBudget,
    policy: o.retention,
    holdingCost: o.holdingCost,
    halfLifeMs: o.reuseHalfLifeMs,
    horizonMs: o.reuseHalfLifeMs,
    // A reuse saves the miss's extra work and the verifier work a miss is likelier to create.
    saved: o.missFactor - 1 + (o.verifyOnMiss - o.verifyOnHit) * o.verifyWork,
    sizeOf: (sig) => o.objectSize.min + (mixSeed(sig, o.seed) % span),
  });
  const waiting: Job[] = [];
  const depth = new Map<string, number>();
  let running = 0;
  let jobs = 0;
  let served = 0;
  let hits = 0;

  const count = (key: string, d: number): void => {
    const v = (depth.get(key) ?? 0) + d;
    if (v <= 0) depth.delete(key);
    else depth.set(key, v);
  };
  const pump = (): void => {
    while (running < o.capacity && waiting.length > 0) {
      const job = waiting.shift()!;
      if (job.signal.aborted) continue;
      running++;
      const units = job.start();
      job.timer = clock.setTimer(() => {
        job.timer = undefined;
        running--;
        job.done();
        pump();
      }, units * o.unitMs);
    }
  };
  /** Queue one job; resolves with the units it took, rejects when the signal aborts first. */
  const run = (key: string, signal: AbortSignal, startFn: () => number): Promise<number> =>
    new Promise<number>((resolve, reject) => {
      let units = 0;
      let inService = false;
      jobs++;
      count(key, 1);
      const finish = (): void => {
        signal.removeEventListener("abort", onAbort);
        jobs--;
        count(key, -1);
      };
      const job: Job = {
        key,
        units: undefined,
        signal,
        start: () => {
          inService = true;
          units = startFn();
          return units;
        },
        done: () => {
          finish();
          resolve(units);
        },
        fail: (reason) => {
          finish();
          reject(reason);
        },
      };
      const onAbort = (): void => {
        if (inService && job.timer !== undefined) {
          job.timer.cancel();
          job.timer = undefined;
          running--;
          queueMicrotask(pump);
        } else {
          const i = waiting.indexOf(job);
          if (i >= 0) waiting.splice(i, 1);
        }
        job.fail(signal.reason);
      };
      signal.addEventListener("abort", onAbort, { once: true });
      waiting.push(job);
      pump();
    });

  return {
    kind: "context",
    memory,
    async handle(task, ctx: HandlerContext): Promise<ContextAnswer> {
      ctx.signal.throwIfAborted();
      const { requestClass, context } = parsePayload(task.payload);
      if (jobs >= o.maxBacklog) {
        throw new TailswarmError(
          "RESOURCE_EXHAUSTED",
          `node ${nodeId}: ${jobs} context jobs waiting or in service, the limit is ${o.maxBacklog}`,
        );
      }
      const sig = contextSignature(requestClass, context);
      const key = queueKey(requestClass, 0);
      memory.demand(sig, clock.now());
      let hit = false;
      const memoryUnits = await run(key, ctx.signal, () => {
        hit = memory.use(sig, clock.now());
        served++;
        if (hit) hits++;
        return hit ? 1 : o.missFactor;
      });
      if (!hit) memory.generate(sig, clock.now());
      const verify = rng.next() < (hit ? o.verifyOnHit : o.verifyOnMiss);
      let work = memoryUnits;
      if (verify) work += await run(queueKey(requestClass, 1), ctx.signal, () => o.verifyWork);
      return { node: nodeId, queueKey: key, hit, work, stageWork: memoryUnits, downstream: verify ? 1 : 0 };
    },
    routingState(): RoutingAdvert {
      return {
        queues: Object.fromEntries(depth),
        signatures: memory.signatures().slice(0, MAX_ADVERTISED_SIGNATURES),
        memoryUsed: memory.used,
        memoryBudget: memory.budget,
        capacity: o.capacity,
        maxBacklog: o.maxBacklog,
        stateAt: clock.now(),
        served,
        hits,
        churn: memory.churn,
      };
    },
  };
}

/** The `HandlerFactory` of the shipped handler `context`. */
export const createContextWorkerHandler: HandlerFactory = (options, env) =>
  createContextWorker(parseContextWorkerOptions(options, env.path), env.nodeId, env.clock);

/**
 * The primitives `w, p, P` that a context worker's options make true for `classes` (what MABP is given
 * in configuration; Learn-MABP would estimate them): the memory stage `class/0` costs 1 unit (penalty
 * 1) with its context resident and K without, and creates a verifier job `class/1` with the
 * configured probabilities; the verifier costs `verifyWork`.
 */
export function contextWorkerPrimitives(
  o: Pick<ContextWorkerOptions, "missFactor" | "verifyWork" | "verifyOnHit" | "verifyOnMiss">,
  classes: readonly string[],
): PrimitiveTable {
  const specs: Record<string, PrimitiveSpec> = {};
  for (const c of classes) {
    const verify = queueKey(c, 1);
    specs[queueKey(c, 0)] = {
      noReuse: {
        work: o.missFactor,
        penalty: o.missFactor,
        successors: [{ key: verify, p: o.verifyOnMiss }],
      },
      reuse: { work: 1, penalty: 1, successors: [{ key: verify, p: o.verifyOnHit }] },
    };
    specs[verify] = { noReuse: { work: o.verifyWork, penalty: o.verifyWork, successors: [] } };
  }
  return new PrimitiveTable(specs);
}
