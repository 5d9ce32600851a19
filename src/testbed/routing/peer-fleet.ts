/**
 * Starts the context-worker peers of one run: as separate processes (the live testbed; each in its own
 * process group, stopped by pid) or as servers in this process (fast tests). Either way every call
 * goes over gRPC on loopback.
 */
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { systemClock } from "../../clock/clock.js";
import { TailswarmError } from "../../errors.js";
import { HandlerRegistry } from "../../mesh/handler.js";
import { createSwarmServer } from "../../mesh/server.js";
import { createContextWorker } from "../../peers/context-worker.js";
import type { ContextWorkerOptions } from "../../peers/context-worker.js";

export interface FleetPeer {
  readonly id: string;
  readonly address: string;
}

export interface Fleet {
  readonly peers: readonly FleetPeer[];
  stop(): Promise<void>;
}

/** One worker config per peer. */
export interface FleetSpec {
  readonly workers: readonly ContextWorkerOptions[];
  readonly processes: boolean;
}

export async function startFleet(spec: FleetSpec): Promise<Fleet> {
  return spec.processes ? startProcesses(spec.workers) : startInProcess(spec.workers);
}

async function startInProcess(workers: readonly ContextWorkerOptions[]): Promise<Fleet> {
  const servers = workers.map((w, i) => {
    const nodeId = `peer-${i}`;
    return createSwarmServer({
      nodeId,
      handlers: new HandlerRegistry([createContextWorker(w, nodeId, systemClock)]),
      concurrency: 4096,
      maxQueue: 4096,
    });
  });
  const peers: FleetPeer[] = [];
  for (const s of servers) peers.push({ id: s.nodeId, address: (await s.listen("127.0.0.1:0")).address });
  return {
    peers,
    stop: async () => {
      for (const s of servers) s.forceClose();
    },
  };
}

const MAIN_URL = new URL(
  import.meta.url.endsWith(".ts") ? "./context-peer-main.ts" : "./context-peer-main.js",
  import.meta.url,
);

async function startProcesses(workers: readonly ContextWorkerOptions[]): Promise<Fleet> {
  const children: ChildProcess[] = [];
  const stop = async (): Promise<void> => {
    await Promise.all(children.map((c) => stopChild(c)));
  };
  try {
    const peers = await Promise.all(
      workers.map(async (worker, i) => {
        const nodeId = `peer-${i}`;
        const args = [
          ...(MAIN_URL.pathname.endsWith(".ts") ? ["--import", "tsx"] : []),
          fileURLToPath(MAIN_URL),
          JSON.stringify({ nodeId, worker }),
        ];
        const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "inherit"], detached: true });
        children.push(child);
        return { id: nodeId, address: await readyAddress(child, nodeId) };
      }),
    );
    return { peers, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

function readyAddress(child: ChildProcess, nodeId: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let buffered = "";
    const timer = setTimeout(
      () => reject(new TailswarmError("INTERNAL", `${nodeId}: not ready in 20 s`)),
      20_000,
    );
    child.stdout!.on("data", (chunk: Buffer) => {
      buffered += chunk.toString();
      const m = /READY (\S+)/.exec(buffered);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    child.on("exit", (code) => {
      clearTimeout(timer);
      reject(new TailswarmError("INTERNAL", `${nodeId}: exited with ${String(code)} before it was ready`));
    });
  });
}

/** SIGTERM to the child's process group, SIGKILL after 2 s. */
function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined)
    return Promise.resolve();
  const pid = child.pid;
  return new Promise((resolve) => {
    const kill = setTimeout(() => {
      try {
        process.kill(-pid, "SIGKILL");
      } catch {
        // already gone
      }
    }, 2_000);
    child.once("exit", () => {
      clearTimeout(kill);
      resolve();
    });
    try {
      process.kill(-pid, "SIGTERM");
    } catch {
      clearTimeout(kill);
      resolve();
    }
  });
}
