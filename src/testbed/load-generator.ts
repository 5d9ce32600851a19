/**
 * Drives the coordinators: at each request of the seeded stream, one `Coordinate` call per policy,
 * staggered `policyStaggerMs` apart in an order drawn afresh for each request (`policyOrder`: every
 * policy takes every slot, and follows every other, equally often in the long run), with the
 * coordinator's budget as the gRPC deadline. Each later copy carries its delay as
 * `modelClockShiftMs`, so the synthetic peers read their latency model (the gateway's episodes) at
 * the request's own moment: every policy meets the same conditions, and the copies' fan-outs do not
 * land on the machine in one burst (the testbed would measure its own CPU instead of the swarm).
 * A request's truth is the workload's `event` while a gateway episode is in progress at the
 * request's time — the same for every policy. Alongside, a direct fan-out to every peer at `measureRatePerS` measures the swarm's
 * fan-out latency outside any policy; each one is moved to the middle of the gap between two
 * requests of the stream, so that it does not meet the policies' bursts it would otherwise collide
 * with.
 */
import type { LatencyModel } from "../peers/latency-model.js";
import type { PolicyName } from "../policy/types.js";
import { hash32 } from "../util/hash.js";
import { createRng, mixSeed } from "../peers/rng.js";
import type { BranchRow, CallRecord, MeasureRecord } from "./records.js";
import type { StreamRequest } from "./request-stream.js";
import type { Scenario } from "./scenario-types.js";
import type { SwarmClient } from "./swarm-client.js";

export interface LoadTargets {
  /** Each scenario coordinator's node, by name: every policy's copy of its requests goes there. */
  readonly coordinators: ReadonlyMap<string, SwarmClient>;
  readonly peers: ReadonlyMap<string, SwarmClient>;
  readonly gateways: ReadonlyMap<string, LatencyModel>;
  /** Decision options of every call (the weighted vote). */
  readonly decision: unknown;
}

export interface LoadCounters {
  sent: number;
  done: number;
  failed: number;
  measured: number;
}

const MEASURE_TIMEOUT_MS = 3_000;

/**
 * The gap between a request's policy copies: the mean gap between requests of all coordinators
 * divided among the policies (so a request's copies spread over about one gap), at most 250 ms.
 */
export function policyStaggerMs(s: Scenario): number {
  const rate = s.coordinators.reduce((n, c) => n + c.ratePerS, 0);
  if (rate <= 0 || s.policies.length <= 1) return 0;
  return Math.min(250, 1000 / rate / s.policies.length);
}

export class LoadGenerator {
  readonly calls: CallRecord[] = [];
  readonly measures: MeasureRecord[] = [];
  readonly counters: LoadCounters = { sent: 0, done: 0, failed: 0, measured: 0 };
  readonly #s: Scenario;
  readonly #targets: LoadTargets;
  readonly #inflight = new Set<Promise<unknown>>();
  /** The Coordinate calls in flight (not the direct measurements, which keep starting until stop). */
  readonly #calls = new Set<Promise<unknown>>();
  #stopped = false;
  #timer: NodeJS.Timeout | undefined;
  #measureTimer: NodeJS.Timeout | undefined;
  /** Ends the current `run` at once (stop). */
  #wake: () => void = () => undefined;
  /** Pending staggered sends (cleared by stop). */
  readonly #slots = new Set<NodeJS.Timeout>();
  readonly #staggerMs: number;

  constructor(scenario: Scenario, targets: LoadTargets) {
    this.#s = scenario;
    this.#targets = targets;
    this.#staggerMs = policyStaggerMs(scenario);
  }

  /** Offsets of a request's policy copies from its own time, ms (slot j sends at j × stagger). */
  slotOffsets(policies: number): number[] {
    return Array.from({ length: policies }, (_, j) => j * this.#staggerMs);
  }

  /** True when some gateway's episode (the event) is in progress now. */
  eventNow(now = Date.now()): boolean {
    for (const m of this.#targets.gateways.values()) if (m.gatewayQueueMs(now) > 0) return true;
    return false;
  }

  /**
   * Runs `stream` from now; resolves when every request was sent and answered, or after `stop()`
   * once the calls in flight have ended. `record` false sends without keeping rows (warm-up).
   */
  async run(
    stream: readonly StreamRequest[],
    policies: readonly PolicyName[],
    record: boolean,
  ): Promise<void> {
    const start = Date.now();
    const budgets = new Map(this.#s.coordinators.map((c) => [c.name, c.budgetMs] as const));
    let next = 0;
    await new Promise<void>((resolve) => {
      this.#wake = resolve;
      const tick = (): void => {
        this.#timer = undefined;
        const now = Date.now() - start;
        while (!this.#stopped && next < stream.length && stream[next]!.atMs <= now) {
          this.#send(stream[next]!, budgets.get(stream[next]!.coordinator)!, policies, start, record);
          next++;
        }
        if (this.#stopped || next >= stream.length) {
          resolve();
          return;
        }
        this.#timer = setTimeout(tick, Math.max(0, stream[next]!.atMs - (Date.now() - start)));
      };
      tick();
    });
    // Only the calls: a measurement to a dead peer takes its whole timeout, and new ones start until
    // stop(), so waiting for every measurement here may never end.
    while (this.#slots.size > 0 || this.#calls.size > 0) {
      if (this.#calls.size > 0) await Promise.allSettled([...this.#calls]);
      else await new Promise((r) => setTimeout(r, this.#staggerMs));
    }
  }

  /**
   * Direct all-peer fan-outs at the scenario's measure rate until `stop()`, from `start`. `avoid` is
   * the request stream that `run` sends from the same `start`: each measurement is moved from its
   * seeded Poisson time to the middle of the gap between the two requests around it (several in one
   * gap share it evenly), so that it is not sent in the same moment as the policies' fan-outs and
   * measures the swarm, not the testbed's own burst. Past the stream's end they keep their times.
   */
  startMeasuring(start: number, avoid: readonly StreamRequest[] = []): void {
    const rate = this.#s.measureRatePerS;
    if (rate <= 0) return;
    const rng = createRng(mixSeed(this.#s.seed, hash32("measure")));
    const offsets = this.slotOffsets(this.#s.policies.length);
    const times = avoid.flatMap((r) => offsets.map((o) => r.atMs + o)).sort((a, b) => a - b);
    const end = times.length > 0 ? times[times.length - 1]! : 0;
    const drawn: number[] = [];
    let at = rng.exponential(1000 / rate);
    for (; at < end; at += rng.exponential(1000 / rate)) drawn.push(at);
    const schedule = staggered(drawn, times);
    let n = 0;
    let past = at; // the first draw past the stream's end
    const next = (): number => {
      if (n < schedule.length) return schedule[n]!;
      const t = past;
      past += rng.exponential(1000 / rate);
      return t;
    };
    const tick = (): void => {
      if (this.#stopped) return;
      const id = `measure-${n++}`;
      this.#track(this.#measureOnce(id, start));
      this.#measureTimer = setTimeout(tick, Math.max(0, next() - (Date.now() - start)));
    };
    this.#measureTimer = setTimeout(tick, Math.max(0, next() - (Date.now() - start)));
  }

  stop(): void {
    this.#stopped = true;
    this.#wake();
    for (const t of this.#slots) clearTimeout(t);
    this.#slots.clear();
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    if (this.#measureTimer !== undefined) clearTimeout(this.#measureTimer);
  }

  async drain(): Promise<void> {
    while (this.#inflight.size > 0) await Promise.allSettled([...this.#inflight]);
  }

  #track(p: Promise<unknown>): void {
    this.#inflight.add(p);
    void p.finally(() => this.#inflight.delete(p));
  }

  #send(
    req: StreamRequest,
    budgetMs: number,
    policies: readonly PolicyName[],
    start: number,
    record: boolean,
  ): void {
    const client = this.#targets.coordinators.get(req.coordinator);
    if (client === undefined) return;
    const sentAt = Date.now();
    const event = this.eventNow(sentAt);
    const w = this.#s.workload;
    const truth = event ? w.event : w.prior;
    const order = policyOrder(policies, this.#s.seed, req.coordinator, req.index);
    for (let j = 0; j < order.length; j++) {
      const policy = order[j]!;
      const send = (): void => {
        const shiftMs = Math.max(0, Date.now() - sentAt);
        const payload = { question: req.question, options: w.options, truth, modelClockShiftMs: shiftMs };
        this.#call(client, req, policy, payload, { budgetMs, sentAt, start, record, event, truth, shiftMs });
      };
      const offset = j * this.#staggerMs;
      if (offset === 0) {
        send();
        continue;
      }
      const timer = setTimeout(() => {
        this.#slots.delete(timer);
        if (!this.#stopped) send();
      }, offset);
      this.#slots.add(timer);
    }
  }

  #call(
    client: SwarmClient,
    req: StreamRequest,
    policy: PolicyName,
    payload: Record<string, unknown>,
    at: {
      budgetMs: number;
      sentAt: number;
      start: number;
      record: boolean;
      event: boolean;
      truth: string;
      shiftMs: number;
    },
  ): void {
    const { budgetMs, sentAt, start, record, event, truth, shiftMs } = at;
    this.counters.sent++;
    const call = client
      .coordinate({
        kind: "vote",
        payload,
        policy,
        decision: "quorum-vote",
        options: this.#targets.decision,
        budgetMs,
      })
      .then((r) => {
        this.counters.done++;
        if (!r.ok) this.counters.failed++;
        if (!record) return;
        const base = {
          t: sentAt - start,
          delayMs: shiftMs,
          coordinator: req.coordinator,
          budgetMs,
          policy,
          request: req.index,
          truth,
          event,
          rttMs: r.rttMs,
        };
        if (!r.ok) {
          this.calls.push({
            ...base,
            ok: false,
            code: r.code,
            message: r.message,
            deadlineMissed: r.code === "DEADLINE_EXCEEDED",
            infoGainPerCommitted: null,
            branches: [],
          });
          return;
        }
        const v = r.value;
        const branches: BranchRow[] = (v.branches ?? []).map((b) => ({
          peer: b.peer,
          outcome: b.outcome,
          pivotal: b.decisionRelevant,
          latencyMs: b.latencyMs,
          lostWorkMs: b.lostWorkMs,
          unsettled: b.unsettled,
        }));
        let action: string;
        try {
          action = String(JSON.parse(Buffer.from(v.action).toString("utf8")));
        } catch {
          action = "";
        }
        this.calls.push({
          ...base,
          ok: true,
          action,
          mode: v.mode,
          reason: v.reason,
          elapsedMs: v.elapsedMs,
          decidedBudgetMs: v.budgetMs,
          fanoutP50Ms: v.fanoutP50Ms,
          fanoutP99Ms: v.fanoutP99Ms,
          decidedAbandonCostMs: v.decidedAbandonCostMs,
          ...(v.estimateBasis ? { estimateBasis: v.estimateBasis } : {}),
          ...(v.fanoutP50Kind ? { fanoutP50Kind: v.fanoutP50Kind } : {}),
          ...(v.fanoutP99Kind ? { fanoutP99Kind: v.fanoutP99Kind } : {}),
          deadlineMissed: r.rttMs > budgetMs,
          fanoutOverran: v.deadlineMissed,
          ...(v.noAnswer && { noAnswer: true }),
          infoGainPerCommitted: v.infoGainPerCommitted ?? null,
          branches,
          ...(v.timing != null && { timing: { ...v.timing } }),
        });
      });
    this.#track(call);
    this.#calls.add(call);
    void call.finally(() => this.#calls.delete(call));
  }

  async #measureOnce(id: string, start: number): Promise<void> {
    const t = Date.now() - start;
    const payload = { question: id, options: this.#s.workload.options, truth: this.#s.workload.prior };
    const peers = [...this.#targets.peers.entries()];
    const results = await Promise.all(
      peers.map(async ([peer, client]) => {
        const r = await client.branch(id, `${id}/${peer}`, "vote", payload, MEASURE_TIMEOUT_MS);
        const ok = r.ok && r.value.status === "BRANCH_STATUS_ANSWERED";
        return { peer, latencyMs: r.rttMs, ok };
      }),
    );
    const censored = results.some((r) => !r.ok);
    this.counters.measured++;
    this.measures.push({
      t,
      fanoutMs: Math.max(...results.map((r) => r.latencyMs)),
      censored,
      peers: results,
    });
  }
}

/**
 * The order of a request's policy copies: a seeded shuffle per request. A fixed rotation would always
 * send each policy right after the same other one, so one policy's aftermath (a fan-out's late branch
 * replies, abandons, recording on the coordinator's loop) would always land on the same next policy.
 */
export function policyOrder<P>(
  policies: readonly P[],
  seed: number,
  coordinator: string,
  index: number,
): P[] {
  const rng = createRng(mixSeed(seed, hash32(`policy-order/${coordinator}`), index));
  const out = [...policies];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rng.next() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/**
 * `drawn` (sorted offsets, ms) moved into the middles of the gaps between `avoid` (sorted offsets):
 * the k draws that fall in one gap (a, b) go to a + i·(b − a)/(k + 1), i = 1..k. Sorted result.
 */
export function staggered(drawn: readonly number[], avoid: readonly number[]): number[] {
  if (avoid.length === 0) return [...drawn];
  const byGap = new Map<number, number>();
  for (const t of drawn) {
    let lo = 0;
    let hi = avoid.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (avoid[mid]! <= t) lo = mid + 1;
      else hi = mid;
    }
    byGap.set(lo, (byGap.get(lo) ?? 0) + 1);
  }
  const out: number[] = [];
  for (const [g, k] of byGap) {
    const a = g === 0 ? 0 : avoid[g - 1]!;
    const b = g < avoid.length ? avoid[g]! : a + 1000;
    for (let i = 1; i <= k; i++) out.push(a + (i * (b - a)) / (k + 1));
  }
  return out.sort((x, y) => x - y);
}
