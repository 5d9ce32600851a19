/**
 * An in-memory `PeerTransport` on a `Clock`: peers are functions with a sampled service time, a
 * concurrency limit (FIFO queue beyond it) and a "down" switch. It keeps the books the engine's
 * abandon accounting is checked against — work each peer did for answers and work it lost when told to
 * stop. With a `SimClock` and a seeded RNG, runs are deterministic.
 *
 * @example
 * const clock = new SimClock();
 * const transport = new MemoryTransport(clock, { seed: 7 });
 * transport.addPeer("a", { latency: (rng) => 10 + exponential(rng, 5), handler: () => "yes" });
 * transport.addPeer("b", { latency: 300 }); // answers with task.payload after 300 ms
 * transport.setDown("b", true); // refuses calls from now on
 */
import type { Clock, TimerHandle } from "../clock/clock.js";
import { TailswarmError, invalid } from "../errors.js";
import type { PeerId } from "../estimate/types.js";
import { createRng } from "../util/rng.js";
import type { Rng } from "../util/rng.js";
import type { BranchCallOptions, BranchRequest, BranchResult, PeerTransport, Task } from "./transport.js";

/** What a peer's handler sees (structurally a superset of src/mesh's HandlerContext). */
export interface MemoryPeerContext {
  /** Aborts when the coordinator abandons the branch, the deadline passes or the peer goes down. */
  readonly signal: AbortSignal;
  readonly deadline: number;
  readonly fanoutId: string;
  readonly hop: number;
  readonly origin: string;
  readonly clock: Clock;
  readonly rng: Rng;
}

/** Computes a peer's answer; it may await the clock. Default: the task's payload. */
export type MemoryPeerHandler = (task: Task, ctx: MemoryPeerContext) => unknown;

/** Service time of one branch, ms, drawn from the transport's seeded RNG. */
export type LatencySampler = (rng: Rng) => number;

export interface MemoryPeerOptions {
  handler?: MemoryPeerHandler;
  /** Service time per branch: a sampler or a constant, ms. Default 0. */
  latency?: LatencySampler | number;
  /** Branches served at once; more wait in a FIFO queue (queue time is not work). Default Infinity. */
  concurrency?: number;
}

/** How a down peer behaves: refuse at once (connection refused) or swallow calls until their deadline. */
export type DownMode = "refuse" | "blackhole";

export interface MemoryPeerStats {
  readonly branches: number;
  readonly answered: number;
  readonly abandoned: number;
  readonly deadlines: number;
  readonly failed: number;
  /** Service ms spent on branches that answered. */
  readonly workDoneMs: number;
  /** Service ms spent on branches that were abandoned, hit their deadline or died with the peer. */
  readonly workLostMs: number;
  readonly inFlight: number;
}

export interface MemoryTransportOptions {
  /** Seed of the RNG the latency samplers draw from. Default 1. */
  seed?: number;
  /** A uniform [0, 1) source to draw from instead (e.g. a src/peers `Rng`'s `next`); overrides `seed`. */
  random?: () => number;
}

interface MutableStats {
  branches: number;
  answered: number;
  abandoned: number;
  deadlines: number;
  failed: number;
  workDoneMs: number;
  workLostMs: number;
}

interface Active {
  /** Ends the branch because the peer went down. */
  kill(): void;
}

interface PeerState {
  readonly handler: MemoryPeerHandler;
  readonly sample: LatencySampler;
  readonly concurrency: number;
  down: DownMode | undefined;
  running: number;
  readonly queue: Array<() => void>;
  readonly active: Set<Active>;
  readonly stats: MutableStats;
}

const defaultHandler: MemoryPeerHandler = (task) => task.payload;

export class MemoryTransport implements PeerTransport {
  readonly #clock: Clock;
  readonly #rng: Rng;
  readonly #peers = new Map<PeerId, PeerState>();

  constructor(clock: Clock, options: MemoryTransportOptions = {}) {
    this.#clock = clock;
    this.#rng = options.random ?? createRng(options.seed ?? 1);
  }

  /** Registers (or replaces) a peer. */
  addPeer(peer: PeerId, options: MemoryPeerOptions = {}): this {
    const latency = options.latency ?? 0;
    if (typeof latency === "number" && !(latency >= 0)) {
      throw invalid(`addPeer(${peer}).latency`, latency, "a number >= 0 or a sampler");
    }
    const concurrency = options.concurrency ?? Infinity;
    if (!(concurrency >= 1)) {
      throw invalid(`addPeer(${peer}).concurrency`, concurrency, "a number >= 1");
    }
    this.#peers.set(peer, {
      handler: options.handler ?? defaultHandler,
      sample: typeof latency === "number" ? () => latency : latency,
      concurrency,
      down: undefined,
      running: 0,
      queue: [],
      active: new Set(),
      stats: {
        branches: 0,
        answered: 0,
        abandoned: 0,
        deadlines: 0,
        failed: 0,
        workDoneMs: 0,
        workLostMs: 0,
      },
    });
    return this;
  }

  peers(): PeerId[] {
    return [...this.#peers.keys()];
  }

  /** Takes a peer down (its in-flight branches fail at once, their work lost) or brings it back. */
  setDown(peer: PeerId, down: boolean, mode: DownMode = "refuse"): void {
    const state = this.#state(peer);
    state.down = down ? mode : undefined;
    if (down) for (const active of [...state.active]) active.kill();
  }

  stats(peer: PeerId): MemoryPeerStats {
    const state = this.#state(peer);
    return { ...state.stats, inFlight: state.active.size };
  }

  branch(peer: PeerId, req: BranchRequest, options: BranchCallOptions): Promise<BranchResult> {
    const state = this.#peers.get(peer);
    if (state === undefined || state.down === "refuse") {
      if (state !== undefined) state.stats.failed++;
      return Promise.resolve({
        kind: "failed",
        code: "PEER_UNAVAILABLE",
        message: state === undefined ? `unknown peer ${peer}` : `peer ${peer} is down`,
      });
    }
    state.stats.branches++;
    return new Promise<BranchResult>((resolve) => this.#serve(state, req, options.signal, resolve));
  }

  #state(peer: PeerId): PeerState {
    const state = this.#peers.get(peer);
    if (state === undefined) {
      throw invalid("peer", peer, "a registered peer");
    }
    return state;
  }

  #serve(
    state: PeerState,
    req: BranchRequest,
    signal: AbortSignal,
    resolve: (r: BranchResult) => void,
  ): void {
    const clock = this.#clock;
    const work = new AbortController();
    const timers: TimerHandle[] = [];
    let startedAt: number | undefined;
    let holdsSlot = false;
    let settled = false;

    const spent = (): number => (startedAt === undefined ? 0 : clock.now() - startedAt);
    const settle = (result: BranchResult): void => {
      if (settled) return;
      settled = true;
      for (const t of timers) t.cancel();
      signal.removeEventListener("abort", onAbort);
      state.active.delete(active);
      if (!work.signal.aborted) work.abort(new TailswarmError("ABORTED", "branch ended"));
      if (holdsSlot) this.#release(state);
      resolve(result);
    };
    const lose = (kind: "abandoned" | "deadline"): void => {
      const lostWorkMs = spent();
      state.stats.workLostMs += lostWorkMs;
      if (kind === "abandoned") state.stats.abandoned++;
      else state.stats.deadlines++;
      settle({ kind, lostWorkMs });
    };
    const onAbort = (): void => lose("abandoned");
    const active: Active = {
      kill: () => {
        state.stats.workLostMs += spent();
        state.stats.failed++;
        settle({ kind: "failed", code: "PEER_UNAVAILABLE", message: "peer went down mid-branch" });
      },
    };

    if (signal.aborted) return lose("abandoned");
    if (req.deadline <= clock.now()) return lose("deadline");
    signal.addEventListener("abort", onAbort, { once: true });
    state.active.add(active);
    timers.push(clock.setTimer(() => lose("deadline"), req.deadline - clock.now()));
    if (state.down === "blackhole") return;

    const arrivedAt = clock.now();
    const start = (): void => {
      if (settled) return this.#release(state);
      holdsSlot = true;
      startedAt = clock.now();
      const serviceMs = Math.max(0, state.sample(this.#rng));
      const ctx: MemoryPeerContext = {
        signal: work.signal,
        deadline: req.deadline,
        fanoutId: req.fanoutId,
        hop: req.hop,
        origin: req.origin,
        clock,
        rng: this.#rng,
      };
      const answer = Promise.resolve().then(() => state.handler(req.task, ctx));
      const elapsed = new Promise<void>((done) => timers.push(clock.setTimer(done, serviceMs)));
      Promise.all([answer, elapsed]).then(
        ([value]) => {
          if (settled) return;
          const served = spent();
          state.stats.workDoneMs += served;
          state.stats.answered++;
          settle({
            kind: "answer",
            answer: value,
            serviceMs: served,
            queueMs: (startedAt ?? arrivedAt) - arrivedAt,
          });
        },
        (error: unknown) => {
          if (settled) return;
          state.stats.workLostMs += spent();
          state.stats.failed++;
          const message = error instanceof Error ? error.message : String(error);
          settle({ kind: "failed", code: TailswarmError.is(error) ? error.code : "PEER_ERROR", message });
        },
      );
    };
    if (state.running < state.concurrency) {
      state.running++;
      start();
    } else {
      state.queue.push(start);
    }
  }

  /** Frees a service slot and starts the next queued branch, if any. */
  #release(state: PeerState): void {
    const next = state.queue.shift();
    if (next !== undefined) next();
    else state.running--;
  }
}
