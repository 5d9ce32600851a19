/**
 * A CPU profile of a window of a bench process's life (the measured rounds, not start-up and warm-up),
 * through node:inspector: `start()`, then `stop(name)` writes `<dir>/<name>.cpuprofile` (open it in
 * Chrome DevTools or speedscope), creating the directory if need be. Without a directory both are no-ops.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Session } from "node:inspector";

export interface WindowProfiler {
  start(): void;
  stop(name: string): void;
}

export function windowProfiler(dir: string | undefined): WindowProfiler {
  if (dir === undefined || dir === "") return { start() {}, stop() {} };
  const session = new Session();
  session.connect();
  return {
    start() {
      session.post("Profiler.enable", () => session.post("Profiler.start"));
    },
    stop(name) {
      session.post("Profiler.stop", (err, res) => {
        const file = join(dir, `${name}.cpuprofile`);
        try {
          if (err !== null) throw err;
          mkdirSync(dir, { recursive: true });
          writeFileSync(file, JSON.stringify(res.profile));
        } catch (e) {
          console.error(`window profiler: ${file} not written: ${(e as Error).message}`);
        }
      });
    },
  };
}
