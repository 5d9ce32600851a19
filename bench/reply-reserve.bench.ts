/**
 * What a Coordinate pays for its reply reserve on arrival: `ReplyReserve.current()` with a full window
 * of overhead samples and the process's real `EventLoopDelay.lateMs()` as its loop part, and `lateMs()`
 * beside `read()` (the full reading with its percentile reads and objects). Timed in batches of 1,000
 * calls so the clock read is not the figure; the reserve's own p99 refresh (every 100 ms) falls in some.
 */
import { pathToFileURL } from "node:url";
import { build } from "hdr-histogram-js";
import { ReplyReserve } from "../src/mesh/reply-reserve.js";
import { EventLoopDelay } from "../src/node/event-loop-delay.js";
import { recordFigures } from "./report.js";
import type { Figure } from "./report.js";

const BATCH = 1_000;
const BATCHES = 2_000;

/** ns per call, p50 and p99 over batches; a turn of the loop between batches lets the ticks run. */
async function perCall(fn: () => number): Promise<{ p50: number; p99: number }> {
  const h = build({ numberOfSignificantValueDigits: 2 });
  let sink = 0;
  for (let b = 0; b < BATCHES; b++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < BATCH; i++) sink += fn();
    h.recordValue(Number(process.hrtime.bigint() - start));
    if (b % 20 === 0) await new Promise((r) => setImmediate(r));
  }
  if (Number.isNaN(sink)) throw new Error("unreachable: keeps the calls from being optimised away");
  return { p50: h.getValueAtPercentile(50) / BATCH, p99: h.getValueAtPercentile(99) / BATCH };
}

export async function run(resultsFile?: string): Promise<void> {
  const loop = new EventLoopDelay();
  try {
    await new Promise((r) => setTimeout(r, 300)); // a first slice of data for the p99 part
    const reserve = new ReplyReserve({
      transitMs: 5,
      minMs: 1,
      maxMs: 100,
      maxShare: 0.5,
      loopLateMs: () => loop.lateMs(),
    });
    const t0 = performance.now();
    for (let i = 0; i < 512; i++) reserve.record(1 + (i % 17) / 4, t0 - i);
    const figures: Record<string, Figure> = {};
    const put = (name: string, r: { p50: number; p99: number }): void => {
      figures[`${name} (p50 of batches)`] = { value: r.p50, unit: "ns/call" };
      figures[`${name} (p99 of batches)`] = { value: r.p99, unit: "ns/call" };
    };
    put("EventLoopDelay.lateMs()", await perCall(() => loop.lateMs()));
    put("EventLoopDelay.read().p99Ms", await perCall(() => loop.read().p99Ms));
    put(
      "ReplyReserve.current() with lateMs()",
      await perCall(() => reserve.current(performance.now(), 90).ms),
    );
    recordFigures("reply-reserve", figures, resultsFile);
  } finally {
    loop.close();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) await run();
