import { afterEach, describe, expect, it } from "vitest";
import { acquireEventLoopDelay, EventLoopDelay } from "../../src/node/event-loop-delay.js";

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe("EventLoopDelay", () => {
  const open: EventLoopDelay[] = [];
  afterEach(() => {
    for (const m of open.splice(0)) m.close();
  });

  it("sees a stall of the loop in its max and p99", async () => {
    const m = new EventLoopDelay(5, 60_000);
    open.push(m);
    await sleep(50);
    const spin = Date.now() + 120;
    while (Date.now() < spin); // block the loop for 120 ms
    await sleep(30);
    const r = m.read();
    expect(r.maxMs).toBeGreaterThanOrEqual(100);
    expect(r.p99Ms).toBeGreaterThanOrEqual(r.p50Ms);
    expect(r.windowMs).toBeGreaterThan(0);
  });

  it("gives the lateness a callback meets as the p99 less the timer's resolution, none before data", async () => {
    const m = new EventLoopDelay(5, 60_000);
    open.push(m);
    expect(m.lateMs()).toBe(0);
    await sleep(20);
    const spin = Date.now() + 120;
    while (Date.now() < spin); // block the loop for 120 ms
    await sleep(10);
    const r = m.read();
    expect(m.lateMs()).toBeCloseTo(Math.max(0, r.p99Ms - 5), 6);
    expect(m.lateMs()).toBeGreaterThan(0);
  });

  it("reads the previous slice with the current one, not the whole run", async () => {
    const m = new EventLoopDelay(5, 100);
    open.push(m);
    await sleep(20);
    const spin = Date.now() + 80;
    while (Date.now() < spin);
    await sleep(40); // the overdue rotation ran: the stall is in the previous or the current slice
    expect(m.read().maxMs).toBeGreaterThanOrEqual(60);
    await sleep(900); // slices rotated: the reading covers the last one or two, not the whole run
    expect(m.read().windowMs).toBeLessThan(700);
  });

  it("is shared by the nodes of one process and closed by the last release", () => {
    const a = acquireEventLoopDelay();
    const b = acquireEventLoopDelay();
    expect(b.monitor).toBe(a.monitor);
    a.release();
    a.release(); // idempotent
    const c = acquireEventLoopDelay();
    expect(c.monitor).toBe(a.monitor);
    b.release();
    c.release();
    const d = acquireEventLoopDelay();
    expect(d.monitor).not.toBe(a.monitor);
    d.release();
  });
});
