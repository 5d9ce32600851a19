/**
 * Gives a bench's measured process a CPU of its own: this process (every thread) on the last CPU,
 * the processes it starts on the others. On a shared two-core machine a coordinator that shares its
 * core with its own peers reads their load as its cost; in a deployment the peers are other machines.
 * The CPUs are those this process may use (a caller's `taskset` or cpuset is kept). `BENCH_PIN=0` turns
 * it off; it is off with fewer than two of them, off Linux, or without `taskset` (util-linux). On two
 * CPUs the peers share one: they, not the coordinator, then bound a closed loop's throughput.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";

export interface CpuPin {
  /** What the run printed about it. */
  readonly label: string;
  /** The command and arguments that start `file args` on the other CPUs. */
  wrap(file: string, args: readonly string[]): [string, string[]];
}

const UNPINNED: CpuPin = { label: "not pinned", wrap: (file, args) => [file, [...args]] };

/** The CPUs this process may run on (`Cpus_allowed_list`, e.g. "0-3,6"), ascending; [] if unknown. */
export function allowedCpus(status = readStatus()): number[] {
  const list = /^Cpus_allowed_list:\s*(\S+)/m.exec(status)?.[1];
  if (list === undefined) return [];
  const cpus: number[] = [];
  for (const part of list.split(",")) {
    const [a, b = a] = part.split("-").map(Number);
    if (!Number.isInteger(a) || !Number.isInteger(b)) return [];
    for (let c = a!; c <= b!; c++) cpus.push(c);
  }
  return cpus;
}

function readStatus(): string {
  try {
    return readFileSync("/proc/self/status", "utf8");
  } catch {
    return "";
  }
}

/** Pins this process (call it before starting children); the returned `wrap` starts them elsewhere. */
export function pinSelf(): CpuPin {
  const cpus = allowedCpus();
  if (process.env.BENCH_PIN === "0" || cpus.length < 2) return UNPINNED;
  const own = String(cpus[cpus.length - 1]);
  const others = cpus.slice(0, -1).join(",");
  try {
    execFileSync("taskset", ["-a", "-p", "-c", own, String(process.pid)], { stdio: "ignore" });
  } catch {
    return UNPINNED;
  }
  return {
    label: `this process on CPU ${own}, the processes it starts on CPU ${others}`,
    wrap: (file, args) => ["taskset", ["-c", others, file, ...args]],
  };
}
