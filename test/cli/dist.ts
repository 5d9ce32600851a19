/** Runs the built CLI (dist/cli/main.js, `npm run build` first), as a user's shell would. */
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cleanEnv, ROOT, watchLogs } from "../node/helpers/spawn-node.js";
import type { LogWatch } from "../node/helpers/spawn-node.js";

export const MAIN = join(ROOT, "dist", "cli", "main.js");

export interface Finished {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `tailswarm ...args` to completion. */
export function tailswarm(
  args: readonly string[],
  options: { env?: Record<string, string>; timeoutMs?: number; cwd?: string } = {},
): Promise<Finished> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [MAIN, ...args], {
      cwd: options.cwd ?? ROOT,
      env: { ...cleanEnv(), ...options.env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const t = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`tailswarm ${args.join(" ")} did not finish; stderr: ${stderr}`));
    }, options.timeoutMs ?? 60_000);
    child.on("exit", (code, signal) => {
      clearTimeout(t);
      resolve({ code: code ?? (signal === "SIGTERM" ? 143 : 137), stdout, stderr });
    });
  });
}

/** The lines of stderr that are not JSON log lines: what the verb itself said. */
export function ownLines(stderr: string): string[] {
  return stderr.split("\n").filter((l) => l !== "" && !l.startsWith("{"));
}

export interface Daemon extends LogWatch {
  readonly child: ChildProcess;
  readonly exited: Promise<number>;
  stop(): Promise<number>;
}

/** Starts a long-running verb (`node`, `host`) and watches its JSON log lines. */
export function daemon(args: readonly string[], env: Record<string, string> = {}): Daemon {
  const child = spawn(process.execPath, [MAIN, ...args], {
    cwd: ROOT,
    env: { ...cleanEnv(), ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const exited = new Promise<number>((resolve) =>
    child.on("exit", (code, signal) => resolve(code ?? (signal === "SIGKILL" ? 137 : 143))),
  );
  const watch = watchLogs(
    child,
    exited.then((c) => String(c)),
  );
  return {
    ...watch,
    child,
    exited,
    stop: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      return exited;
    },
  };
}

/** `tailswarm host` over one JSON config per node (listen 127.0.0.1:0); resolves with each node's address. */
export async function host(
  configs: readonly Record<string, unknown>[],
): Promise<{ daemon: Daemon; addresses: Record<string, string> }> {
  const dir = mkdtempSync(join(tmpdir(), "tailswarm-cli-host-"));
  const args = ["host"];
  configs.forEach((c, i) => {
    const file = join(dir, `node-${i}.json`);
    writeFileSync(file, JSON.stringify({ listen: "127.0.0.1:0", ...c }));
    args.push("--config", file);
  });
  const started = daemon(args);
  const d: Daemon = {
    ...started,
    stop: () => started.stop().finally(() => rmSync(dir, { recursive: true, force: true })),
  };
  const line = await d
    .waitForLog((l) => l.msg === "hosting", 60_000)
    .catch(async (error: unknown) => {
      await d.stop(); // a host that never said "hosting" is not left running
      throw error;
    });
  const nodes = line.nodes as { nodeId: string; address: string }[];
  return { daemon: d, addresses: Object.fromEntries(nodes.map((n) => [n.nodeId, n.address])) };
}
