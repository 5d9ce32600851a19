/**
 * Starts and stops the testbed's node processes: `node dist/cli/main.js node --config FILE`, or
 * `host --config FILE ...` for several nodes in one process (src/cli/commands/host.ts), each in
 * its own process group (detached) so that stopping kills the node and anything it started, and a
 * Ctrl-C at the terminal reaches only the testbed, which then stops them in order.
 *
 * Stop: SIGTERM to every group (the node drains), SIGKILL to the groups still alive after the grace,
 * then a check that no process of any group is left. A last-resort `exit` hook SIGKILLs whatever is
 * still registered if the testbed itself exits without stopping (an uncaught error); only a SIGKILL
 * of the testbed can leave nodes behind.
 */
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { closeSync, existsSync, openSync, readFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { TailswarmError, invalid } from "../errors.js";

/** dist/cli/main.js of this package (the testbed always launches the built node). */
export const NODE_MAIN = fileURLToPath(new URL("../cli/main.js", import.meta.url));

export interface LaunchSpec {
  readonly id: string;
  readonly config: Record<string, unknown>;
}

/** Several nodes in one process (`tailswarm host`). */
export interface HostSpec {
  /** The process's id (its log file is `<id>.log`). */
  readonly id: string;
  readonly nodes: readonly LaunchSpec[];
}

export interface Launched {
  readonly id: string;
  readonly pid: number;
  readonly startedAt: number;
  readonly logFile: string;
  exitCode: number | null;
  exitSignal: NodeJS.Signals | null;
  exited: boolean;
}

/** USER_HZ: the unit of /proc/<pid>/stat's CPU times, 100 on every Linux architecture Node runs on. */
const CLOCK_TICKS_PER_S = 100;

const live = new Set<number>();
let hooked = false;

function hookExit(): void {
  if (hooked) return;
  hooked = true;
  process.on("exit", () => {
    for (const pid of live) killGroup(pid, "SIGKILL");
  });
}

function killGroup(pid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pid, signal);
    return true;
  } catch {
    return false;
  }
}

/** True when some process of the group led by `pid` still exists. */
export function groupAlive(pid: number): boolean {
  try {
    process.kill(-pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

export class Launcher {
  readonly #dir: string;
  readonly #procs: { info: Launched; child: ChildProcess }[] = [];
  readonly #main: string;

  /** `dir` holds the generated configs and the nodes' logs. */
  constructor(dir: string, main = NODE_MAIN) {
    this.#dir = dir;
    this.#main = main;
    if (!existsSync(main)) {
      throw invalid("node entry point", main, "a file of the built package (run 'npm run build')", {
        code: "INVALID_CONFIG",
      });
    }
    hookExit();
  }

  get launched(): readonly Launched[] {
    return this.#procs.map((p) => p.info);
  }

  /** One node in its own process. */
  async start(spec: LaunchSpec): Promise<Launched> {
    return this.#spawn(spec.id, ["node", "--config", await this.#writeConfig(spec)]);
  }

  /** Several nodes in one process. */
  async startHost(spec: HostSpec): Promise<Launched> {
    const args = ["host"];
    for (const node of spec.nodes) args.push("--config", await this.#writeConfig(node));
    return this.#spawn(spec.id, args);
  }

  async #writeConfig(spec: LaunchSpec): Promise<string> {
    const configFile = join(this.#dir, `${spec.id}.json`);
    await writeFile(configFile, JSON.stringify(spec.config, null, 2));
    return configFile;
  }

  #spawn(id: string, args: readonly string[]): Launched {
    const logFile = join(this.#dir, `${id}.log`);
    const fd = openSync(logFile, "a");
    let child: ChildProcess;
    try {
      child = spawn(process.execPath, [this.#main, ...args], {
        detached: true,
        stdio: ["ignore", fd, fd],
        // Telemetry off unless the user asks for it: the testbed measures through the replies, and
        // recording spans nobody exports costs the peers CPU the scenario did not model.
        env: { OTEL_SDK_DISABLED: "true", ...process.env, TAILSWARM_CONFIG: "" },
      });
    } finally {
      closeSync(fd);
    }
    if (child.pid === undefined) {
      throw new TailswarmError("INTERNAL", `could not start node ${id} (see ${logFile})`);
    }
    const info: Launched = {
      id,
      pid: child.pid,
      startedAt: Date.now(),
      logFile,
      exitCode: null,
      exitSignal: null,
      exited: false,
    };
    live.add(child.pid);
    child.on("exit", (code, signal) => {
      info.exited = true;
      info.exitCode = code;
      info.exitSignal = signal;
    });
    child.on("error", () => undefined);
    this.#procs.push({ info, child });
    return info;
  }

  /**
   * CPU seconds (user + system) the launched processes have used so far, from /proc (Linux); null
   * where /proc is not readable. Processes that already exited count as 0.
   */
  cpuSeconds(): number | null {
    let ticks = 0;
    for (const { info } of this.#procs) {
      if (info.exited) continue;
      let stat: string;
      try {
        stat = readFileSync(`/proc/${info.pid}/stat`, "utf8");
      } catch {
        return null;
      }
      // Fields after the command name (which may contain spaces): utime and stime are 14 and 15.
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      ticks += Number(fields[11]) + Number(fields[12]);
    }
    return ticks / CLOCK_TICKS_PER_S;
  }

  /** Nodes that exited on their own (before stop). */
  crashed(): Launched[] {
    return this.launched.filter((l) => l.exited);
  }

  /**
   * SIGTERM every group, SIGKILL after `graceMs`, and wait until no process of any group is left.
   * Returns the ids whose group had to be killed, and those still alive afterwards (should be none).
   */
  async stopAll(graceMs = 3_000): Promise<{ killed: string[]; leftRunning: string[] }> {
    for (const { info } of this.#procs) killGroup(info.pid, "SIGTERM");
    const until = Date.now() + graceMs;
    while (Date.now() < until && this.#procs.some(({ info }) => groupAlive(info.pid))) await pause(50);
    const killed: string[] = [];
    for (const { info } of this.#procs) {
      if (groupAlive(info.pid)) {
        killed.push(info.id);
        killGroup(info.pid, "SIGKILL");
      }
    }
    const hard = Date.now() + 2_000;
    while (Date.now() < hard && this.#procs.some(({ info }) => groupAlive(info.pid))) await pause(20);
    const leftRunning = this.#procs.filter(({ info }) => groupAlive(info.pid)).map(({ info }) => info.id);
    for (const { info } of this.#procs) if (!groupAlive(info.pid)) live.delete(info.pid);
    return { killed, leftRunning };
  }
}

function pause(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
