/**
 * Preloaded into each `tailswarm host` process by bench/scale.bench.ts (`node --import`): once a second
 * it appends that second's event-loop delay (max and p99, ms) and the process's CPU (µs) to
 * `$SCALE_LOOP_DIR/<pid>.jsonl`, so the bench can tell a saturated machine (every process's loop held
 * in turn) from a process blocked by its own work, phase by phase. Inert without SCALE_LOOP_DIR.
 */
import { appendFileSync } from "node:fs";
import { monitorEventLoopDelay } from "node:perf_hooks";
import process from "node:process";
import { setInterval } from "node:timers";

const dir = process.env.SCALE_LOOP_DIR;
if (dir !== undefined && dir !== "") {
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  let cpu = process.cpuUsage();
  setInterval(() => {
    const used = process.cpuUsage(cpu);
    cpu = process.cpuUsage();
    const line = {
      t: Date.now(),
      maxMs: delay.max / 1e6,
      p99Ms: delay.percentile(99) / 1e6,
      cpuUs: used.user + used.system,
    };
    delay.reset();
    appendFileSync(`${dir}/${process.pid}.jsonl`, `${JSON.stringify(line)}\n`);
  }, 1_000).unref();
}
