import { connect, createServer } from "node:net";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { acquireEventLoopDelay, EventLoopDelay } from "../../src/node/event-loop-delay.js";

/** Long enough for ~150 ticks: one stall is then past the window's p99, which cannot show it. */
const QUIET_MS = 1_500;
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

  it("reports none before the loop has been late", () => {
    const m = new EventLoopDelay(5, 60_000);
    open.push(m);
    expect(m.lateMs()).toBe(0);
  });

  it("gives a request read on a loopback socket right after a stall that stall's lateness", async () => {
    const m = new EventLoopDelay(10, 60_000);
    open.push(m);
    const server = createServer();
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const seen = new Promise<number>((resolve) =>
      server.once("connection", (s) => s.once("data", () => (s.destroy(), resolve(m.lateMs())))),
    );
    const client = connect((server.address() as AddressInfo).port, "127.0.0.1");
    try {
      await new Promise<void>((r) => client.once("connect", r));
      await sleep(QUIET_MS);
      // the bytes are on the socket while the loop is held: their read waits out the stall
      client.write("x");
      const spin = performance.now() + 60;
      while (performance.now() < spin);
      // the 60 ms stall less up to one resolution (the tick before it) and a little slack
      expect(await seen).toBeGreaterThanOrEqual(45);
    } finally {
      client.destroy();
      await new Promise((r) => server.close(r));
    }
  });

  it("gives a request read after a stall, and handled later in that turn, the stall and the turn's time", async () => {
    const m = new EventLoopDelay(10, 60_000);
    open.push(m);
    const server = createServer();
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    let quiet = NaN;
    const seen = new Promise<{ quiet: number; stall: number; late: number }>((resolve) =>
      server.once("connection", (s) =>
        s.once("data", () => {
          const stall = m.readStallMs();
          // the same turn goes on (other requests of the read): 40 ms more
          const spin = performance.now() + 40;
          while (performance.now() < spin);
          s.destroy();
          resolve({ quiet, stall, late: m.readStallMs() });
        }),
      ),
    );
    const client = connect((server.address() as AddressInfo).port, "127.0.0.1");
    try {
      await new Promise<void>((r) => client.once("connect", r));
      await sleep(100);
      quiet = m.readStallMs();
      client.write("x");
      const spin = performance.now() + 60;
      while (performance.now() < spin);
      const r = await seen;
      expect(r.quiet).toBeLessThan(25); // a tick's own lateness on a busy machine, no stall
      expect(r.stall).toBeGreaterThanOrEqual(45);
      // the turn's part counts from one resolution (10 ms) past the newest tick: the 40 ms spin adds at least 30
      expect(r.late).toBeGreaterThanOrEqual(r.stall + 40 - 10 - 2);
    } finally {
      client.destroy();
      await new Promise((r) => server.close(r));
    }
  });

  it("gives a callback queued behind a stall that stall's lateness", async () => {
    const m = new EventLoopDelay(10, 60_000);
    open.push(m);
    await sleep(QUIET_MS);
    const seen = await new Promise<number>((resolve) =>
      setImmediate(() => {
        setImmediate(() => resolve(m.lateMs())); // runs in the next turn, after the timers
        const spin = performance.now() + 60;
        while (performance.now() < spin);
      }),
    );
    expect(seen).toBeGreaterThanOrEqual(45);
    await sleep(50); // ticks ran since: the stall is past, and one stall is below the window's p99
    expect(m.lateMs()).toBeLessThan(50);
  });

  it("reads the previous slice with the current one, not the whole run", async () => {
    // 300 ms slices: the stall stays in the reading unless two rotations pass while the test sleeps 40 ms,
    // which a loaded machine did to 100 ms slices (a late timer)
    const m = new EventLoopDelay(5, 300);
    open.push(m);
    await sleep(20);
    const spin = Date.now() + 80;
    while (Date.now() < spin);
    await sleep(40); // the stall is in the previous or the current slice
    expect(m.read().maxMs).toBeGreaterThanOrEqual(60);
    await sleep(1_500); // slices rotated: the reading covers the last one or two (≤ 600 ms and a late
    // rotation's slack), not the whole run (≥ 1,640 ms)
    expect(m.read().windowMs).toBeLessThan(1_000);
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
