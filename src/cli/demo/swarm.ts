/**
 * The demo's swarm: one coordinator and three `vote` peers on loopback, two fast and one slow (a
 * 40 ms median and a heavy tail), all in one `tailswarm host` process. One process because four
 * Node processes would spend most of the demo's minute starting on a small machine, and one is
 * one process group to stop; it is how the testbed runs its swarms, over real gRPC between the
 * nodes. The launcher (src/testbed/launcher.ts) starts it in its own process group and kills that
 * group on stop, or on exit if the demo dies first.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LATENCY_BOOK_DEFAULTS } from "../../estimate/options.js";
import { NodeClient } from "../../node/client.js";
import { freePorts } from "../../testbed/free-port.js";
import { Launcher } from "../../testbed/launcher.js";
import type { Launched } from "../../testbed/launcher.js";

export interface DemoPeer {
  readonly id: string;
  readonly address: string;
  /** What its latency model is, for people. */
  readonly latency: string;
}

export interface DemoSwarm {
  readonly coordinator: string;
  readonly peers: readonly DemoPeer[];
  /** The `tailswarm host` process. */
  readonly process: Launched;
  /** Where the configs and the host's log are (removed by stop unless kept). */
  readonly dir: string;
  /** SIGTERM, then SIGKILL after a grace; true when no process of the swarm is left. */
  stop(options?: { keepFiles?: boolean }): Promise<boolean>;
  /** SIGKILL now (a second signal). */
  kill(): void;
}

const vote = (id: string, body: object, tail?: object): Record<string, unknown> => ({
  kind: "vote",
  use: "synthetic",
  options: {
    seed: `demo-${id}`,
    body,
    ...(tail !== undefined && { tail }),
    maxMs: 800,
    wrap: { use: "vote" },
  },
});

const PEERS = [
  { id: "fast-1", latency: "~4 ms", handler: vote("fast-1", { medianMs: 4, sigma: 0.3 }) },
  { id: "fast-2", latency: "~6 ms", handler: vote("fast-2", { medianMs: 6, sigma: 0.3 }) },
  {
    id: "slow",
    latency: "~40 ms, one call in five 80 ms to 800 ms more (Pareto tail)",
    handler: vote("slow", { medianMs: 40, sigma: 0.2 }, { probability: 0.2, scaleMs: 80, shape: 2.5 }),
  },
] as const;

/** The coordinator's estimator: the node's defaults, named because the demo's text quotes them. */
export const DEMO_ESTIMATOR = {
  windowMs: LATENCY_BOOK_DEFAULTS.windowMs,
  minSamples: LATENCY_BOOK_DEFAULTS.minSamples,
} as const;

/** Starts the swarm and waits until the coordinator answers and sees every peer up. */
export async function startDemoSwarm(signal: AbortSignal, readyTimeoutMs = 30_000): Promise<DemoSwarm> {
  const dir = await mkdtemp(join(tmpdir(), "tailswarm-demo-"));
  const ports = await freePorts(PEERS.length + 1);
  const address = (i: number): string => `127.0.0.1:${ports[i]!}`;
  const peers: DemoPeer[] = PEERS.map((p, i) => ({ id: p.id, address: address(i + 1), latency: p.latency }));
  const launcher = new Launcher(dir);
  const common = { logLevel: "info", probe: { intervalMs: 500, timeoutMs: 400, failureThreshold: 3 } };
  const process = await launcher.startHost({
    id: "demo-swarm",
    nodes: [
      {
        id: "coordinator",
        config: {
          ...common,
          nodeId: "coordinator",
          listen: address(0),
          peers: peers.map((p) => p.address),
          handlers: [],
          estimator: DEMO_ESTIMATOR,
          // The slow peer is slow by design (its p99 is ~8x the others'): the demo is about the rule
          // deciding on its tail, so the coordinator keeps it in fan-outs rather than ejecting it as a
          // chronic latency outlier (health.outlierFactor; failures still eject it).
          health: { outlierFactor: 1_000 },
        },
      },
      ...PEERS.map((p, i) => ({
        id: p.id,
        config: { ...common, nodeId: p.id, listen: address(i + 1), handlers: [p.handler] },
      })),
    ],
  });
  const swarm: DemoSwarm = {
    coordinator: address(0),
    peers,
    process,
    dir,
    async stop(options = {}) {
      const { leftRunning } = await launcher.stopAll(3_000);
      if (!options.keepFiles) await rm(dir, { recursive: true, force: true });
      return leftRunning.length === 0;
    },
    kill() {
      try {
        globalThis.process.kill(-process.pid, "SIGKILL");
      } catch {
        // already gone
      }
    },
  };
  try {
    await waitReady(swarm, signal, readyTimeoutMs);
  } catch (error) {
    await swarm.stop({ keepFiles: true });
    throw error;
  }
  return swarm;
}

async function waitReady(swarm: DemoSwarm, signal: AbortSignal, timeoutMs: number): Promise<void> {
  const client = new NodeClient(swarm.coordinator);
  const until = Date.now() + timeoutMs;
  try {
    while (!signal.aborted) {
      if (swarm.process.exited) {
        throw new Error(`the swarm's process exited (code ${swarm.process.exitCode}); see ${swarm.dir}`);
      }
      const status = await client.status(1_000).catch(() => undefined);
      const up = new Set(status?.peers.filter((p) => p.up && p.peerId !== "").map((p) => p.peerId));
      if (swarm.peers.every((p) => up.has(p.id))) return;
      if (Date.now() > until) {
        throw new Error(`the swarm was not up within ${timeoutMs / 1000} s; its log is in ${swarm.dir}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  } finally {
    client.close();
  }
}
