/**
 * Admission control for RPCs that fan out (Coordinate): a fixed concurrency limit with a FIFO queue
 * (a `WorkQueue`) bounded by each call's own deadline: a call is refused at arrival — never after work
 * began — when its predicted wait (its place in the queue over the measured service rate, `capacity` /
 * mean service time) plus the mean service time is past its remaining deadline (it could only expire
 * there), or when the queue holds `maxQueue` (a bound on memory). A refusal carries a retry hint (the
 * predicted wait, ms). While it refuses, the node is "shedding" until `shedHoldMs` after the last
 * refusal, so health does not flap with every call. A call is checked on its HTTP/2 headers
 * (`admitEarly`, ./header-admission.ts) and again when its handler takes a slot (`acquire`). A queued
 * call whose deadline comes before its slot (the service time grew after it was admitted) is refused
 * the same way, never run — also when its slot comes after the deadline because the deadline's timer
 * ran late on a busy event loop: started then, it could only answer late.
 *
 * The limit is fixed, not adaptive: a fan-out's latency is mostly its peers' time, so a gradient
 * limit on measured latency would shrink when peers are slow, not when this node is overloaded.
 */
import { TailswarmError } from "../errors.js";
import { checkRange, intRange } from "../util/range.js";
import type { NumberRange } from "../util/range.js";
import type { Clock, TimerHandle } from "../clock/clock.js";
import type { LimitLog } from "./limit-log.js";
import { WorkQueue } from "./work-queue.js";

export interface AdmissionLimits {
  /** Fan-outs running at once. */
  readonly maxConcurrent: number;
  /** Fan-outs waiting beyond `maxConcurrent`; more are refused with RESOURCE_EXHAUSTED. */
  readonly maxQueue: number;
  /** Health stays NOT_SERVING this long after the last refusal, ms. */
  readonly shedHoldMs: number;
}

export const ADMISSION_DEFAULTS: AdmissionLimits = {
  maxConcurrent: 64,
  // A bound on memory: what a call may wait is bounded by its deadline (the predicted wait).
  maxQueue: 2_048,
  shedHoldMs: 1_000,
};

export const ADMISSION_RANGES: Readonly<Record<keyof AdmissionLimits, NumberRange>> = {
  maxConcurrent: intRange(1, 100_000),
  maxQueue: intRange(0, 1_000_000),
  shedHoldMs: intRange(0, 3_600_000),
};

/** Weight of the newest service time in the running mean the wait is predicted from. */
const SERVICE_EWMA = 0.1;

/** Why a call was refused, and the retry hint for `grpc-retry-pushback-ms`, ms. */
export interface Refused {
  readonly message: string;
  readonly retryAfterMs: number;
}

/** A refusal thrown by `acquire`: RESOURCE_EXHAUSTED with its retry hint. */
export class AdmissionRefused extends TailswarmError implements Refused {
  readonly retryAfterMs: number;

  constructor(refused: Refused) {
    super("RESOURCE_EXHAUSTED", refused.message);
    this.retryAfterMs = refused.retryAfterMs;
  }
}

export class Admission {
  readonly limits: AdmissionLimits;
  readonly #queue: WorkQueue;
  readonly #clock: Clock;
  readonly #log: LimitLog;
  readonly #what: string;
  readonly #onShedding: (shedding: boolean) => void;
  #meanServiceMs: number | undefined;
  #arriving = 0;
  /** Turns whose arriving calls have been forgotten; a `leave` from an earlier one does nothing. */
  #arrivals = 0;
  #arrivalReset: TimerHandle | undefined;
  #shedUntil = 0;
  #holdTimer: TimerHandle | undefined;

  constructor(options: {
    what: string;
    limits: Partial<AdmissionLimits>;
    clock: Clock;
    log: LimitLog;
    onShedding: (shedding: boolean) => void;
  }) {
    const value = (key: keyof AdmissionLimits): number =>
      checkRange(
        `${options.what}.${key}`,
        options.limits[key] ?? ADMISSION_DEFAULTS[key],
        ADMISSION_RANGES[key],
      );
    this.limits = {
      maxConcurrent: value("maxConcurrent"),
      maxQueue: value("maxQueue"),
      shedHoldMs: value("shedHoldMs"),
    };
    this.#queue = new WorkQueue(this.limits.maxConcurrent, this.limits.maxQueue);
    this.#clock = options.clock;
    this.#log = options.log;
    this.#what = options.what;
    this.#onShedding = options.onShedding;
  }

  get running(): number {
    return this.#queue.inFlight;
  }

  get queued(): number {
    return this.#queue.queueDepth;
  }

  get shedding(): boolean {
    return this.#holdTimer !== undefined;
  }

  /** Overloaded: shedding, or every slot taken (a call arriving now would wait). */
  get saturated(): boolean {
    return this.shedding || this.#ahead() >= this.#queue.capacity;
  }

  /** Wait a call arriving now would spend in the queue, ms (0 while a slot is free or nothing is known). */
  predictedWaitMs(): number {
    const waiting = this.#ahead() - this.#queue.capacity;
    if (waiting < 0) return 0;
    return ((waiting + 1) / this.#queue.capacity) * (this.#meanServiceMs ?? 0);
  }

  /**
   * Admission on a call's metadata, before its request is read or decoded: the refusal `acquire` would
   * throw, as a plain value (no error, no stack: a flood's refusals are the cheap path), or, for a
   * call let through, a `leave` function. Such a call counts as arriving (ahead of later calls) until
   * `leave` is called, when it reaches `acquire` or ends, so calls whose headers are read together
   * see each other; but only until the event loop's next turn: a call whose request comes later (or
   * never: a client could hold places so) is then left to `acquire`'s own check.
   */
  admitEarly(remainingMs: number): Refused | (() => void) {
    const refused = this.#check(remainingMs);
    if (refused !== undefined) return refused;
    this.#arriving++;
    if (this.#arrivalReset === undefined) {
      this.#arrivalReset = this.#clock.setTimer(() => {
        this.#arrivalReset = undefined;
        this.#arriving = 0;
        this.#arrivals++;
      }, 0);
    }
    const arrivals = this.#arrivals;
    let left = false;
    return () => {
      if (left || arrivals !== this.#arrivals) return;
      left = true;
      this.#arriving--;
    };
  }

  /**
   * Takes a slot for a call with `remainingMs` to its deadline, or throws `AdmissionRefused` when the
   * queue is full or the predicted wait is past the deadline. The promise form rejects with the
   * signal's reason when the caller cancels, and with `AdmissionRefused` when the deadline comes first
   * (the signal aborts with DEADLINE_EXCEEDED, or the slot comes at or after it): a queued call that
   * expired is refused, never run. Give every slot back with `release(serviceMs)`.
   */
  acquire(signal: AbortSignal, remainingMs: number): true | Promise<void> {
    const refused = this.#check(remainingMs);
    if (refused !== undefined) throw new AdmissionRefused(refused);
    const slot = this.#queue.acquire(signal);
    if (slot === true) return true;
    const queuedAt = this.#clock.now();
    const due = queuedAt + remainingMs;
    return slot.then(
      () => {
        // the deadline's timer runs late on a busy loop: a slot can come after it, when the call could only answer late
        if (this.#clock.now() < due) return;
        this.#queue.release();
        throw this.#expired(queuedAt);
      },
      (reason: unknown) => {
        throw TailswarmError.is(reason, "DEADLINE_EXCEEDED") ? this.#expired(queuedAt) : reason;
      },
    );
  }

  /** Gives a slot back; `serviceMs` (how long the call held it) feeds the wait prediction. */
  release(serviceMs: number): void {
    this.#meanServiceMs =
      this.#meanServiceMs === undefined
        ? serviceMs
        : this.#meanServiceMs + SERVICE_EWMA * (serviceMs - this.#meanServiceMs);
    this.#queue.release();
  }

  /** Stops the timers (server shutdown). */
  close(): void {
    this.#holdTimer?.cancel();
    this.#holdTimer = undefined;
    this.#arrivalReset?.cancel();
    this.#arrivalReset = undefined;
  }

  /** Calls running, waiting, and let in on their metadata but not yet at `acquire`. */
  #ahead(): number {
    return this.#queue.inFlight + this.#queue.queueDepth + this.#arriving;
  }

  #check(remainingMs: number): Refused | undefined {
    const q = this.#queue;
    if (this.#ahead() < q.capacity) return undefined;
    const wait = this.predictedWaitMs();
    const service = this.#meanServiceMs ?? 0;
    const state = `${q.inFlight} running, ${q.queueDepth} queued, ${this.#arriving} arriving`;
    if (wait > 0 && wait + service > remainingMs) {
      return this.#refuse(
        `${this.#what}: predicted wait ${wait.toFixed(0)} ms (${state}) and service ${service.toFixed(0)} ms are past the ${remainingMs.toFixed(0)} ms left to the deadline`,
        wait,
        "predictedWait",
      );
    }
    if (this.#ahead() - q.capacity >= q.maxQueue) {
      return this.#refuse(
        `${this.#what}: ${state}; limit is ${q.capacity} running and ${q.maxQueue} waiting (${this.#what}.maxQueue)`,
        wait,
        "maxQueue",
      );
    }
    return undefined;
  }

  /** A queued call whose deadline came before its slot: refused (never run), like one refused at arrival. */
  #expired(queuedAt: number): AdmissionRefused {
    const waited = this.#clock.now() - queuedAt;
    return new AdmissionRefused(
      this.#refuse(
        `${this.#what}: deadline came after ${waited.toFixed(0)} ms queued (${this.#queue.inFlight} running, ${this.#queue.queueDepth} queued); not started`,
        this.predictedWaitMs(),
        "expiredQueued",
      ),
    );
  }

  /**
   * Refuses a call, logged under its cause's own key (`coordinate.maxQueue`, `coordinate.predictedWait`,
   * `coordinate.expiredQueued`), so that one cause's flood does not hide another's line, with the limits in
   * force (`max` too where one key is the limit).
   */
  #refuse(message: string, waitMs: number, cause: "maxQueue" | "predictedWait" | "expiredQueued"): Refused {
    const retryAfterMs = Math.max(1, Math.ceil(waitMs > 0 ? waitMs : (this.#meanServiceMs ?? 100)));
    const { maxConcurrent, maxQueue } = this.limits;
    this.#log.report(`${this.#what}.${cause}`, {
      running: this.#queue.inFlight,
      queued: this.#queue.queueDepth,
      arriving: this.#arriving,
      retryAfterMs,
      ...(cause === "maxQueue" && { max: maxQueue }),
      maxConcurrent,
      maxQueue,
    });
    this.#shedUntil = this.#clock.now() + this.limits.shedHoldMs;
    if (this.#holdTimer === undefined) {
      this.#onShedding(true);
      this.#armHold();
    }
    return { message, retryAfterMs };
  }

  #armHold(): void {
    this.#holdTimer = this.#clock.setTimer(
      () => {
        if (this.#clock.now() < this.#shedUntil) {
          this.#armHold();
          return;
        }
        this.#holdTimer = undefined;
        this.#onShedding(false);
      },
      Math.max(1, this.#shedUntil - this.#clock.now()),
    );
  }
}
