/** Spawns `tailswarm node` (through tsx) and waits for its "listening" log line. */
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
const MAIN = join(ROOT, "src", "cli", "main.ts");

export interface LogLine {
  readonly level: string;
  readonly module: string;
  readonly msg: string;
  readonly [key: string]: unknown;
}

export interface RunningNode {
  readonly child: ChildProcess;
  readonly address: string;
  readonly port: number;
  readonly logs: LogLine[];
  stderr(): string;
  /** Resolves with the exit code (or 128 + signal number). */
  readonly exited: Promise<number>;
  waitForLog(pred: (l: LogLine) => boolean, timeoutMs?: number): Promise<LogLine>;
  kill(signal?: NodeJS.Signals): void;
}

const SIGNALS: Record<string, number> = { SIGINT: 2, SIGKILL: 9, SIGTERM: 15 };

/** Runs the CLI to completion: exit code, stdout, stderr. */
export function runCli(
  args: readonly string[],
  env: Record<string, string> = {},
  timeoutMs = 60_000,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", MAIN, ...args], {
      cwd: ROOT,
      env: { ...cleanEnv(), ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const t = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`tailswarm ${args.join(" ")} did not finish in ${timeoutMs} ms; stderr: ${stderr}`));
    }, timeoutMs);
    child.on("exit", (code, signal) => {
      clearTimeout(t);
      resolve({ code: code ?? 128 + (SIGNALS[signal ?? ""] ?? 0), stdout, stderr });
    });
  });
}

/** The JSON log lines of a node's stderr as they arrive, and a wait for the first matching one. */
export interface LogWatch {
  readonly logs: LogLine[];
  /** Everything the process wrote to stderr so far. */
  readonly stderr: () => string;
  /** Resolves with the first matching line; rejects after `timeoutMs` or once `exited` settles. */
  readonly waitForLog: (pred: (l: LogLine) => boolean, timeoutMs?: number) => Promise<LogLine>;
}

/** Watches `child`'s stderr; `exited` resolves with how it ended (for the error message). */
export function watchLogs(child: ChildProcess, exited: Promise<string>): LogWatch {
  const logs: LogLine[] = [];
  let raw = "";
  let partial = "";
  const waiters = new Set<{ pred: (l: LogLine) => boolean; resolve: (l: LogLine) => void }>();
  child.stderr?.on("data", (d: Buffer) => {
    raw += d.toString();
    partial += d.toString();
    const lines = partial.split("\n");
    partial = lines.pop() ?? "";
    for (const line of lines) {
      if (!line.startsWith("{")) continue;
      try {
        const l = JSON.parse(line) as LogLine;
        logs.push(l);
        for (const w of [...waiters]) {
          if (w.pred(l)) {
            waiters.delete(w);
            w.resolve(l);
          }
        }
      } catch {
        // not a log line
      }
    }
  });
  const waitForLog = (pred: (l: LogLine) => boolean, timeoutMs = 30_000): Promise<LogLine> => {
    const found = logs.find(pred);
    if (found) return Promise.resolve(found);
    return new Promise((resolve, reject) => {
      const w = { pred, resolve: (l: LogLine) => (clearTimeout(t), resolve(l)) };
      const t = setTimeout(() => {
        waiters.delete(w);
        reject(new Error(`no matching log line in ${timeoutMs} ms; stderr so far:\n${raw}`));
      }, timeoutMs);
      waiters.add(w);
      void exited.then((how) => {
        if (!waiters.delete(w)) return;
        clearTimeout(t);
        reject(new Error(`node exited (${how}) before the expected log line; stderr:\n${raw}`));
      });
    });
  };
  return { logs, stderr: () => raw, waitForLog };
}

/** The caller's environment without TAILSWARM_* and OTEL_* (a test's node sees only what it sets). */
export function cleanEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v !== undefined && !k.startsWith("TAILSWARM_") && !k.startsWith("OTEL_")) env[k] = v;
  }
  return env;
}

export function spawnNode(
  args: readonly string[],
  env: Record<string, string> = {},
  startTimeoutMs = 60_000,
): Promise<RunningNode> {
  const child = spawn(process.execPath, ["--import", "tsx", MAIN, "node", ...args], {
    cwd: ROOT,
    env: { ...cleanEnv(), ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const exited = new Promise<number>((resolve) => {
    child.on("exit", (code, signal) => resolve(code ?? 128 + (SIGNALS[signal ?? ""] ?? 0)));
  });
  const { logs, stderr, waitForLog } = watchLogs(
    child,
    exited.then((code) => String(code)),
  );
  return waitForLog((l) => l.msg === "listening", startTimeoutMs).then((l) => ({
    child,
    address: l.address as string,
    port: l.port as number,
    logs,
    stderr,
    exited,
    waitForLog,
    kill: (signal: NodeJS.Signals = "SIGTERM") => void child.kill(signal),
  }));
}

/** Stops nodes that are still running (SIGKILL), for afterAll. */
export async function killAll(nodes: readonly (RunningNode | undefined)[]): Promise<void> {
  await Promise.all(
    nodes.map(async (n) => {
      if (n === undefined || n.child.exitCode !== null || n.child.signalCode !== null) return;
      n.kill("SIGKILL");
      await n.exited;
    }),
  );
}
