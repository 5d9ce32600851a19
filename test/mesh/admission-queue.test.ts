/**
 * The deadline-aware queue of `Admission`, on a simulated clock: a call waits while its predicted
 * wait (place in the queue over capacity / mean service time) plus the mean service time fits its
 * remaining deadline, whatever the queue's length; `maxQueue` bounds it apart from time. A queued call
 * whose deadline comes before its slot is refused, never run.
 */
import { describe, expect, it } from "vitest";
import { SimClock } from "../../src/clock/sim-clock.js";
import { Admission, AdmissionRefused } from "../../src/mesh/admission.js";
import { LimitLog } from "../../src/mesh/limit-log.js";
import { TailswarmError } from "../../src/errors.js";

function admission(maxQueue: number): { a: Admission; limits: string[]; clock: SimClock } {
  const limits: string[] = [];
  const clock = new SimClock();
  const a = new Admission({
    what: "coordinate",
    limits: { maxConcurrent: 2, maxQueue, shedHoldMs: 0 },
    clock,
    log: new LimitLog((limit) => void limits.push(limit), 0),
    onShedding: () => undefined,
  });
  return { a, limits, clock };
}

/** Fills both slots and teaches a mean service time of 100 ms. */
function warm(a: Admission, signal: AbortSignal): void {
  expect(a.acquire(signal, 10_000)).toBe(true);
  a.release(100);
  expect(a.acquire(signal, 10_000)).toBe(true);
  expect(a.acquire(signal, 10_000)).toBe(true);
}

describe("Admission's deadline-aware queue", () => {
  it("queues as long as wait plus service fits the deadline, then refuses naming both", () => {
    const { a, limits } = admission(1_000);
    const signal = new AbortController().signal;
    warm(a, signal);
    // 2 slots at 100 ms each: 20 calls a second. With 1,000 ms left, the n-th waiter waits n/2 × 100 ms
    // and is served by n/2 × 100 + 100 ≤ 1,000: 18 wait, the 19th is refused.
    let queued = 0;
    for (;;) {
      try {
        void (a.acquire(signal, 1_000) as Promise<void>).catch(() => undefined);
        queued++;
      } catch (error) {
        expect((error as Error).message).toMatch(
          /^coordinate: predicted wait 950 ms \(2 running, 18 queued, 0 arriving\) and service 100 ms are past the 1000 ms left to the deadline$/,
        );
        expect((error as { retryAfterMs: number }).retryAfterMs).toBe(950);
        break;
      }
    }
    expect(queued).toBe(18);
    expect(limits).toEqual(["coordinate.predictedWait"]);
    // a call with more time left still waits: the bound is each call's deadline, not a length
    expect(a.acquire(signal, 5_000)).toBeInstanceOf(Promise);
  });

  it("is saturated while every slot is taken or it sheds", () => {
    const { a } = admission(3);
    const signal = new AbortController().signal;
    expect(a.acquire(signal, 10_000)).toBe(true);
    expect(a.saturated).toBe(false);
    expect(a.acquire(signal, 10_000)).toBe(true);
    expect(a.saturated).toBe(true);
    a.release(100);
    expect(a.saturated).toBe(false);
  });

  it("maxQueue bounds the queue apart from time", () => {
    const { a, limits } = admission(3);
    const signal = new AbortController().signal;
    warm(a, signal);
    for (let i = 0; i < 3; i++) void (a.acquire(signal, 60_000) as Promise<void>).catch(() => undefined);
    expect(() => a.acquire(signal, 60_000)).toThrow(
      /^coordinate: 2 running, 3 queued, 0 arriving; limit is 2 running and 3 waiting \(coordinate\.maxQueue\)$/,
    );
    expect(limits).toEqual(["coordinate.maxQueue"]);
  });

  it("logs a refusal with the limits in force, and max where one key is the limit", () => {
    const lines: [string, Record<string, unknown>][] = [];
    const a = new Admission({
      what: "coordinate",
      limits: { maxConcurrent: 2, maxQueue: 1, shedHoldMs: 0 },
      clock: new SimClock(),
      log: new LimitLog((limit, fields) => void lines.push([limit, fields]), 0),
      onShedding: () => undefined,
    });
    const signal = new AbortController().signal;
    warm(a, signal);
    void (a.acquire(signal, 60_000) as Promise<void>).catch(() => undefined);
    expect(() => a.acquire(signal, 60_000)).toThrow(/coordinate\.maxQueue/);
    expect(() => a.acquire(signal, 10)).toThrow(/predicted wait/);
    expect(lines).toEqual([
      [
        "coordinate.maxQueue",
        { running: 2, queued: 1, arriving: 0, retryAfterMs: 100, max: 1, maxConcurrent: 2, maxQueue: 1 },
      ],
      [
        "coordinate.predictedWait",
        expect.objectContaining({ maxConcurrent: 2, maxQueue: 1, running: 2, queued: 1 }),
      ],
    ]);
    expect(lines[1]?.[1]).not.toHaveProperty("max");
  });

  it("logs each cause under its own key, so a flood of one does not hide another within the interval", async () => {
    const limits: string[] = [];
    const clock = new SimClock();
    const a = new Admission({
      what: "coordinate",
      limits: { maxConcurrent: 2, maxQueue: 2, shedHoldMs: 0 },
      clock,
      // one line per key per second, as the node logs
      log: new LimitLog((limit) => void limits.push(limit), 1_000),
      onShedding: () => undefined,
    });
    const signal = new AbortController().signal;
    warm(a, signal);
    const queued = a.acquire(signal, 150) as Promise<void>;
    void (a.acquire(signal, 60_000) as Promise<void>).catch(() => undefined);
    for (let i = 0; i < 5; i++) expect(() => a.acquire(signal, 60_000)).toThrow(/coordinate\.maxQueue/);
    for (let i = 0; i < 5; i++) expect(() => a.acquire(signal, 10)).toThrow(/predicted wait/);
    await clock.advance(200);
    a.release(100);
    await expect(queued).rejects.toThrow(/deadline came after/);
    expect(limits).toEqual(["coordinate.maxQueue", "coordinate.predictedWait", "coordinate.expiredQueued"]);
  });

  it("refuses a queued call whose deadline aborts it, RESOURCE_EXHAUSTED with a retry hint", async () => {
    const { a, limits, clock } = admission(10);
    const signal = new AbortController().signal;
    warm(a, signal);
    const deadline = new AbortController();
    const slot = a.acquire(deadline.signal, 1_000) as Promise<void>;
    await clock.advance(1_000);
    deadline.abort(new TailswarmError("DEADLINE_EXCEEDED", "coordinate: deadline passed"));
    const refused = await slot.catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(AdmissionRefused);
    expect((refused as AdmissionRefused).code).toBe("RESOURCE_EXHAUSTED");
    expect((refused as AdmissionRefused).message).toMatch(
      /^coordinate: deadline came after 1000 ms queued \(2 running, 0 queued\); not started$/,
    );
    expect((refused as AdmissionRefused).retryAfterMs).toBeGreaterThan(0);
    expect(limits).toEqual(["coordinate.expiredQueued"]);
    // a cancel is not a refusal: its reason passes through
    const cancel = new AbortController();
    const cancelled = a.acquire(cancel.signal, 1_000) as Promise<void>;
    cancel.abort(new TailswarmError("ABORTED", "cancelled"));
    expect(await cancelled.catch((e: unknown) => e)).not.toBeInstanceOf(AdmissionRefused);
  });

  it("refuses a call whose slot comes after its deadline (its timer late) and passes the slot on", async () => {
    const { a, clock } = admission(10);
    const signal = new AbortController().signal;
    warm(a, signal);
    const late = a.acquire(signal, 200) as Promise<void>;
    const next = a.acquire(signal, 10_000) as Promise<void>;
    await clock.advance(250); // past the first waiter's deadline; its deadline timer (the handler's) has not run
    a.release(100);
    const refused = await late.catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(AdmissionRefused);
    expect((refused as Error).message).toMatch(/deadline came after 250 ms queued/);
    await next; // the refused call's slot went to the next waiter
    expect(a.running).toBe(2);
    expect(a.queued).toBe(0);
  });
});
