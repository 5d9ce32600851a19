/**
 * Gives a bench's measured process a CPU of its own: this process (every thread) on the last CPU,
 * the processes it starts on the others. On a shared two-core machine a coordinator that shares its
 * core with its own peers reads their load as its cost; in a deployment the peers are other machines.
 * `BENCH_PIN=0` turns it off; it is off with fewer than two CPUs or without `taskset` (util-linux).
 */
import { execFileSync } from "node:child_process";
import { availableParallelism } from "node:os";

export interface CpuPin {
  /** What the run printed about it. */
  readonly label: string;
  /** The command and arguments that start `file args` on the other CPUs. */
  wrap(file: string, args: readonly string[]): [string, string[]];
}

const UNPINNED: CpuPin = { label: "not pinned", wrap: (file, args) => [file, [...args]] };

/** Pins this process (call it before starting children); the returned `wrap` starts them elsewhere. */
export function pinSelf(): CpuPin {
  const cpus = availableParallelism();
  if (process.env.BENCH_PIN === "0" || cpus < 2) return UNPINNED;
  const own = String(cpus - 1);
  const others = cpus === 2 ? "0" : `0-${cpus - 2}`;
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
