/**
 * The slotted simulator of the paper's model, driven by the same src/routing code as the live node.
 * Each slot: (1) every node's state is advertised (queues per queue key, resident signatures); (2) new
 * and successor units are routed one by one by the policy's Router, whose reservations bridge the
 * decisions of the slot; (3) each node serves up to its capacity in the policy's service order, with
 * the primitives its resident memory makes true; completed stages create successors (next slot) and
 * objects; (4) each node retains a budget-feasible subset of resident and generated objects.
 * Deterministic for a given seed.
 */
import { LearnedPrimitives } from "../routing/learned-primitives.js";
import { perWork, serviceWeight } from "../routing/pressure.js";
import type { PrimitiveEntry, Primitives } from "../routing/primitives.js";
import { marginalValue, retain, type RetentionItem } from "../routing/retention.js";
import { DecayedCounts } from "../routing/reuse-stats.js";
import { createRouter } from "../routing/router.js";
import { MAX_ADVERTISED_SIGNATURES, NO_MEMORY, SignatureSet } from "../routing/signature.js";
import type { PeerView, RouteTask, SignatureLookup } from "../routing/types.js";
import { createRng } from "../util/rng.js";
import { isStable, mean, quantile, slope, type RunMetrics } from "./metrics.js";
import type { SimParams } from "./params.js";
import type { SimPolicy } from "./policies.js";
import { poisson, Zipf } from "./sampling.js";
import type { Workload } from "./workload.js";

/** Retention valuation: horizon (slots) of expected reuse, holding cost per size unit per slot, demand half-life. */
export const RETENTION_SHAPE = Object.freeze({ horizon: 100, holdingPerSlot: 0.01, demandHalfLife: 50 });
/** Decayed count → rate per slot (1/λ is the effective window of the decay). */
const demandRateFactor = Math.LN2 / RETENTION_SHAPE.demandHalfLife;

interface Unit {
  readonly cls: number;
  readonly stage: number;
  readonly z: number;
  readonly born: number;
  readonly seq: number;
}

interface Resident {
  readonly size: number;
  lastUsed: number;
}

class Fifo {
  items: Unit[] = [];
  head = 0;
  get length(): number {
    return this.items.length - this.head;
  }
  push(u: Unit): void {
    this.items.push(u);
  }
  peek(): Unit {
    return this.items[this.head]!;
  }
  shift(): Unit {
    const u = this.items[this.head++]!;
    if (this.head > 64 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return u;
  }
}

interface NodeState {
  readonly id: string;
  readonly capacity: number;
  readonly budget: number;
  readonly queues: Map<string, Fifo>;
  readonly counts: Record<string, number>;
  backlog: number;
  carry: number;
  readonly resident: Map<number, Resident>;
  used: number;
  readonly demand: DecayedCounts;
  /** The advertised signature set, rebuilt only after retention changed the resident set. */
  advert: SignatureLookup | undefined;
}

/** Run one policy on one workload; returns the post-warm-up metrics. */
export function runSim(workload: Workload, params: SimParams, policy: SimPolicy): RunMetrics {
  const rng = createRng(params.seed * 7919 + 17);
  const arrivalsRng = createRng(params.seed * 104729 + 3);
  const warmup = Math.floor(params.horizon * params.warmupFraction);
  // The prior is the workload's true no-reuse table: unseen pairs take it, not learned approximations.
  const learned =
    policy.learned === true ? new LearnedPrimitives(workload.noReusePrior, { unseen: "prior" }) : undefined;
  const prims: Primitives = learned ?? workload.truth;
  const router = createRouter(policy.router, {
    primitives: prims,
    nu: params.nu,
    reservationTtl: 1,
    random: createRng(params.seed * 31 + 5),
  });

  const keys: string[] = [];
  const keyStage = new Map<string, number>();
  const averaged = new Map<string, PrimitiveEntry>();
  for (const c of workload.classes) {
    c.stages.forEach((s, k) => {
      keys.push(s.key);
      keyStage.set(s.key, k);
      averaged.set(s.key, workload.truth.averaged(s.key));
    });
  }
  const objectInfo = new Map<number, { cls: number; size: number }>();
  workload.objects.forEach((objs, cls) =>
    objs.forEach((o) => objectInfo.set(o.signature, { cls, size: o.size })),
  );
  const savedByClass = workload.classes.map((c) => reuseSavings(workload, c.stages, params.nu));
  const zipfs = workload.classes.map((c) => new Zipf(c.stateTypes, params.skew));
  const shareCdf: number[] = [];
  workload.classes.reduce((acc, c) => (shareCdf.push(acc + c.share), acc + c.share), 0);

  const nodes: NodeState[] = workload.nodes.map((n) => ({
    id: n.id,
    capacity: n.capacity,
    budget: n.budget,
    queues: new Map(keys.map((k) => [k, new Fifo()])),
    counts: Object.fromEntries(keys.map((k) => [k, 0])),
    backlog: 0,
    carry: 0,
    resident: new Map(),
    used: 0,
    demand: new DecayedCounts(RETENTION_SHAPE.demandHalfLife),
    advert: undefined,
  }));
  const costFrom = nodes.map(
    (src) =>
      (peer: string): number =>
        peer === src.id ? 0 : workload.transferPenalty,
  );
  const indexOf = new Map(nodes.map((n, i) => [n.id, i]));

  let pending: { unit: Unit; src: number }[] = [];
  let seq = 0;
  const backlogSeries: number[] = [];
  const delays: number[] = [];
  let served = 0;
  let penalty = 0;
  let work = 0;
  let eligible = 0;
  let hits = 0;
  let churnEvents = 0;
  let successorsMade = 0;
  let arrived = 0;
  let completed = 0;

  for (let t = 0; t < params.horizon; t++) {
    const measuring = t >= warmup;
    // Exogenous arrivals join this slot's routing at a uniformly random ingress node.
    const nArr = poisson(arrivalsRng, workload.arrivalRate);
    for (let a = 0; a < nArr; a++) {
      const u = arrivalsRng() * shareCdf[shareCdf.length - 1]!;
      let cls = 0;
      while (cls < shareCdf.length - 1 && u >= shareCdf[cls]!) cls++;
      const z = zipfs[cls]!.sample(arrivalsRng);
      pending.push({
        unit: { cls, stage: 0, z, born: t, seq: seq++ },
        src: Math.floor(arrivalsRng() * nodes.length),
      });
      if (measuring) arrived++;
    }

    // (1) advertise, (2) route.
    const views: PeerView[] = nodes.map((n) => ({
      id: n.id,
      queues: { ...n.counts },
      backlog: n.backlog,
      signatures: advertised(n),
      memoryUsed: n.used,
      memoryBudget: n.budget,
      capacity: n.capacity,
      stateAt: t,
    }));
    for (const n of nodes) router.settle(n.id, t);
    for (const { unit, src } of pending) {
      const cls = workload.classes[unit.cls]!;
      const stage = cls.stages[unit.stage]!;
      const c = workload.commodities[unit.cls]![unit.stage]![unit.z]!;
      const task: RouteTask = {
        commodity: c,
        signature: stage.memory ? workload.objects[unit.cls]![unit.z]!.signature : undefined,
        pressure: nodes[src]!.counts[stage.key]! + 1,
      };
      const [dest] = router.route(task, views, 1, { now: t + 0.5, costOf: costFrom[src] });
      const j = dest === undefined ? src : indexOf.get(dest)!;
      const node = nodes[j]!;
      node.queues.get(stage.key)!.push(unit);
      node.counts[stage.key]! += 1;
      node.backlog += 1;
      if (j !== src && measuring) penalty += workload.transferPenalty;
    }
    pending = [];

    // (3) service.
    for (let j = 0; j < nodes.length; j++) {
      const node = nodes[j]!;
      const generated: number[] = [];
      let avail = node.carry + node.capacity;
      node.carry = 0;
      const queue = (k: string): number => node.counts[k] ?? 0;
      while (node.backlog > 0) {
        const key = pickKey(node, keys, policy.service, prims, averaged, params.nu, queue, workload);
        const fifo = node.queues.get(key)!;
        const unit = fifo.peek();
        const stage = workload.classes[unit.cls]!.stages[unit.stage]!;
        const sig = stage.memory ? workload.objects[unit.cls]![unit.z]!.signature : NO_MEMORY;
        const compat = sig !== NO_MEMORY && node.resident.has(sig) ? sig : NO_MEMORY;
        const entry = workload.truth.get(node.id, key, compat);
        if (entry.work > avail) {
          node.carry = avail;
          break;
        }
        avail -= entry.work;
        fifo.shift();
        node.counts[key]! -= 1;
        node.backlog -= 1;
        const made: string[] = [];
        for (const s of entry.successors) {
          if (rng() < s.p) {
            made.push(s.key);
            pending.push({
              unit: { cls: unit.cls, stage: keyStage.get(s.key)!, z: unit.z, born: unit.born, seq: seq++ },
              src: j,
            });
          }
        }
        learned?.observe(node.id, key, compat, {
          work: entry.work,
          penalty: entry.penalty,
          successors: made,
        });
        if (sig !== NO_MEMORY) {
          node.demand.record(sig, t);
          if (compat !== NO_MEMORY) node.resident.get(sig)!.lastUsed = t;
          else generated.push(sig);
        }
        if (measuring) {
          served++;
          penalty += entry.penalty;
          work += entry.work;
          successorsMade += made.length;
          if (sig !== NO_MEMORY) {
            eligible++;
            if (compat !== NO_MEMORY) hits++;
          }
        }
        if (made.length === 0 && unit.born >= warmup) {
          delays.push(t - unit.born + 1);
          completed++;
        }
      }
      // (4) retention: only a new object can change a feasible resident set.
      if (generated.length > 0) {
        const changes = retainAt(node, generated, t, policy.retention, objectInfo, savedByClass);
        if (changes > 0) node.advert = undefined;
        if (measuring) churnEvents += changes;
      }
    }

    let total = pending.length;
    for (const n of nodes) total += n.backlog;
    if (measuring) backlogSeries.push(total);
  }

  const s = slope(backlogSeries);
  const mb = mean(backlogSeries);
  return {
    policy: policy.name,
    load: params.load,
    slope: s,
    meanBacklog: mb,
    stable: isStable(s, mb),
    penalty: served > 0 ? penalty / served : NaN,
    p95Delay: quantile(delays, 0.95),
    hitRatio: eligible > 0 ? hits / eligible : 0,
    churn: served > 0 ? churnEvents / served : 0,
    workPerUnit: served > 0 ? work / served : NaN,
    downstreamPerRequest: completed > 0 ? successorsMade / completed : NaN,
    completionRatio: arrived > 0 ? completed / arrived : NaN,
  };
}

/** The bounded advertisement: every resident signature when few, else the most demanded 64. */
function advertised(n: NodeState): SignatureLookup {
  if (n.advert !== undefined) return n.advert;
  if (n.resident.size <= MAX_ADVERTISED_SIGNATURES) {
    n.advert = new Set(n.resident.keys());
  } else {
    const ranked = [...n.resident.keys()].map((sig) => ({ sig, w: n.demand.weight(sig) }));
    ranked.sort((a, b) => b.w - a.w);
    n.advert = SignatureSet.bounded(ranked.map((r) => r.sig));
  }
  return n.advert;
}

function pickKey(
  node: NodeState,
  keys: readonly string[],
  order: SimPolicy["service"],
  prims: Primitives,
  averaged: ReadonlyMap<string, PrimitiveEntry>,
  nu: number,
  queue: (k: string) => number,
  workload: Workload,
): string {
  let bestKey = "";
  let best = -Infinity;
  for (const key of keys) {
    const q = node.counts[key]!;
    if (q === 0) continue;
    let score: number;
    if (order === "fifo") {
      score = -node.queues.get(key)!.peek().seq;
    } else if (order === "mabp") {
      const u = node.queues.get(key)!.peek();
      const stage = workload.classes[u.cls]!.stages[u.stage]!;
      const sig = stage.memory ? workload.objects[u.cls]![u.z]!.signature : NO_MEMORY;
      const compat = sig !== NO_MEMORY && node.resident.has(sig) ? sig : NO_MEMORY;
      const e = prims.get(node.id, key, compat);
      score = perWork(serviceWeight(q, e, queue, nu), e.work);
    } else {
      const e = averaged.get(key)!;
      score = perWork(serviceWeight(q, e, queue, order === "oblivious-cost" ? nu : 0), e.work);
    }
    if (score > best) {
      best = score;
      bestKey = key;
    }
  }
  return bestKey;
}

/** Reuse savings of one object of a class: work, ν·penalty and downstream work saved, averaged over its memory stages. */
function reuseSavings(workload: Workload, stages: Workload["classes"][number]["stages"], nu: number): number {
  let sum = 0;
  let n = 0;
  for (const s of stages) {
    if (!s.memory) continue;
    const miss = workload.truth.get("", s.key, NO_MEMORY);
    const hit = workload.truth.get("", s.key, 1);
    let downstream = 0;
    for (const m of miss.successors) {
      const h = hit.successors.find((x) => x.key === m.key)?.p ?? 0;
      downstream += (m.p - h) * workload.truth.get("", m.key, NO_MEMORY).work;
    }
    sum += miss.work - hit.work + nu * (miss.penalty - hit.penalty) + downstream;
    n++;
  }
  return n === 0 ? 0 : sum / n;
}

/** Runs the node's retention rule over resident ∪ generated; returns insertions + evictions. */
function retainAt(
  node: NodeState,
  generated: readonly number[],
  t: number,
  rule: SimPolicy["retention"],
  objectInfo: ReadonlyMap<number, { cls: number; size: number }>,
  savedByClass: readonly number[],
): number {
  const R = RETENTION_SHAPE;
  const item = (sig: number, resident: boolean, lastUsed: number): RetentionItem => {
    const { cls, size } = objectInfo.get(sig)!;
    const count = node.demand.count(sig, t);
    return {
      signature: sig,
      size,
      resident,
      expectedReuse: count * demandRateFactor * R.horizon,
      saved: savedByClass[cls]!,
      lastUsed,
      popularity: count,
    };
  };
  const fresh = new Set(generated.filter((s) => !node.resident.has(s)));
  // Fast path: everything fits, so no resident needs to go; recency and popularity keep all, marginal
  // value admits the fresh objects worth their holding cost.
  let freshSize = 0;
  for (const sig of fresh) freshSize += objectInfo.get(sig)!.size;
  if (node.used + freshSize <= node.budget) {
    let changes = 0;
    for (const sig of fresh) {
      const it = item(sig, false, t);
      if (rule === "marginal-value" && marginalValue(it, R.holdingPerSlot * R.horizon) <= 0) continue;
      node.resident.set(sig, { size: it.size, lastUsed: t });
      node.used += it.size;
      changes++;
    }
    return changes;
  }
  const items: RetentionItem[] = [];
  for (const [sig, r] of node.resident) items.push(item(sig, true, r.lastUsed));
  for (const sig of fresh) items.push(item(sig, false, t));
  const kept = retain(rule, items, node.budget, { holdingCost: R.holdingPerSlot * R.horizon });
  const keep = new Set(kept.map((k) => k.signature));
  let changes = 0;
  for (const [sig, r] of node.resident) {
    if (!keep.has(sig)) {
      node.resident.delete(sig);
      node.used -= r.size;
      changes++;
    }
  }
  for (const it of kept) {
    if (!it.resident) {
      node.resident.set(it.signature, { size: it.size, lastUsed: t });
      node.used += it.size;
      changes++;
    }
  }
  return changes;
}
