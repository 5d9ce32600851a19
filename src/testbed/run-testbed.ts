/**
 * One testbed run: start the scenario's nodes as real processes on loopback, wait until every node
 * answers and every coordinator sees every peer, warm up, drive the measured load, stop every process
 * (and check that none is left), and write report.json, report.html and the terminal table. SIGINT or
 * SIGTERM ends the load early; the processes are still stopped and the partial report still written.
 */
import { mkdir } from "node:fs/promises";
import { join, resolve } from "node:path";
import { availableParallelism } from "node:os";
import { TailswarmError } from "../errors.js";
import { freePorts } from "./free-port.js";
import { Launcher } from "./launcher.js";
import type { HostSpec } from "./launcher.js";
import { LoadGenerator } from "./load-generator.js";
import { Progress } from "./progress.js";
import type { ProcessSummary, Report } from "./report.js";
import { renderHtml } from "./report-html.js";
import { formatTable } from "./report-table.js";
import { driveLoad, driveReport, writeRunFiles } from "./drive.js";
import type { DriveResult, RunFiles } from "./drive.js";
import type { Scenario } from "./scenario-types.js";
import { SwarmClient } from "./swarm-client.js";
import {
  coordinatorNodeConfig,
  decisionOptions,
  gatewayModels,
  peerNodeConfig,
  planPeers,
} from "./topology.js";

export interface RunOptions {
  readonly scenario: Scenario;
  readonly outDir: string;
  /** Stops the run early (Ctrl-C); the report is still written. */
  readonly signal?: AbortSignal;
  readonly progress?: Progress;
  /** Spawn-to-ready limit for all nodes, ms. Default 120 s. */
  readonly startupTimeoutMs?: number;
  /**
   * How nodes map to processes. "grouped" (default): one process per region for its peers
   * (`tailswarm host`) and one per coordinator; "per-node": one process per node.
   */
  readonly processes?: ProcessLayout;
}

export type ProcessLayout = "grouped" | "per-node";

export interface RunResult {
  readonly report: Report;
  readonly table: string;
  readonly files: RunFiles;
  /** Every process the run started (their pids), for callers that verify none outlived it. */
  readonly pids: readonly number[];
}

export async function runTestbed(o: RunOptions): Promise<RunResult> {
  const s = o.scenario;
  const progress = o.progress ?? new Progress();
  const outDir = resolve(o.outDir);
  const nodesDir = join(outDir, "nodes");
  await mkdir(nodesDir, { recursive: true });
  const peers = planPeers(s);
  const decision = decisionOptions(s, peers) as {
    options: string[];
    prior: string;
    weights: Record<string, number>;
  };
  // One node per scenario coordinator; every policy's copy of a request goes to it (the policy is
  // named per request), so its estimates learn from all of its fan-outs, as a deployed node's would.
  const coordinators = s.coordinators;
  const ports = await freePorts(peers.length + coordinators.length);
  const launcher = new Launcher(nodesDir);
  const clients: SwarmClient[] = [];
  const gen = new LoadGenerator(s, {
    coordinators: new Map(),
    peers: new Map(),
    gateways: gatewayModels(s),
    decision,
  });
  let interrupted = false;
  const onAbort = (): void => {
    interrupted = true;
    gen.stop();
  };
  o.signal?.addEventListener("abort", onAbort, { once: true });
  if (o.signal?.aborted) interrupted = true;

  let processes: ProcessSummary | null = null;
  const startedAt = new Date();
  let driven: DriveResult | undefined;
  const peerClients = new Map<string, SwarmClient>();
  const coordClients = new Map<string, SwarmClient>();
  let cpuAtStart: number | null = null;
  let cpuMeasured: number | null = null;
  let startupMsAll = 0;
  let startupMax = 0;
  try {
    // 1. processes
    const layout = o.processes ?? "grouped";
    const peerSpecs = peers.map((p, i) => ({ id: p.id, config: peerNodeConfig(s, p, ports[i]!) }));
    const peerPorts = ports.slice(0, peers.length);
    const coordinatorSpecs = coordinators.map((c, j) => ({
      id: c.name,
      config: coordinatorNodeConfig(s, c.name, ports[peers.length + j]!, peerPorts),
    }));
    const perNode = (specs: typeof peerSpecs): HostSpec[] => specs.map((n) => ({ id: n.id, nodes: [n] }));
    // Peers first, coordinators once every peer answers: a coordinator whose first probes find no
    // peer listening backs off (grpc-js reconnect backoff, its probe period) and joins late.
    const phases: { groups: HostSpec[]; clients: Map<string, SwarmClient> }[] = [
      {
        groups:
          layout === "per-node"
            ? perNode(peerSpecs)
            : s.regions
                .map((r) => ({
                  id: `peers-${r.name}`,
                  nodes: peerSpecs.filter((_, i) => peers[i]!.region === r.name),
                }))
                .filter((g) => g.nodes.length > 0),
        clients: peerClients,
      },
      {
        groups:
          layout === "per-node"
            ? perNode(coordinatorSpecs)
            : coordinatorSpecs.map((n) => ({ id: `coordinator-${n.id}`, nodes: [n] })),
        clients: coordClients,
      },
    ];
    for (const [i, p] of peers.entries()) peerClients.set(p.id, new SwarmClient(`127.0.0.1:${ports[i]!}`));
    for (const [j, c] of coordinators.entries())
      coordClients.set(c.name, new SwarmClient(`127.0.0.1:${ports[peers.length + j]!}`));
    clients.push(...peerClients.values(), ...coordClients.values());
    progress.log(
      `testbed ${s.name}: starting ${peers.length} peers and ${coordinators.length} coordinators in ${phases[0]!.groups.length + phases[1]!.groups.length} processes (logs: ${nodesDir})`,
    );
    const t0 = Date.now();
    const ready = new Map<string, number>();
    for (const phase of phases) {
      for (const g of phase.groups) {
        if (interrupted) break; // Ctrl-C while starting: launch no more, stop what runs, still report
        if (layout === "per-node") await launcher.start(g.nodes[0]!);
        else await launcher.startHost(g);
      }
      const timeout = o.startupTimeoutMs ?? 120_000; // from t0, for both phases together
      for (const [id, ms] of await waitReady(launcher, phase.clients, timeout, o.signal, progress, t0))
        ready.set(id, ms);
    }
    startupMax = Math.max(...ready.values());
    startupMsAll = Date.now() - t0;
    progress.log(
      `all ${ready.size} nodes answer after ${(startupMsAll / 1000).toFixed(1)} s (slowest ${(startupMax / 1000).toFixed(1)} s)`,
    );
    await waitMembership(coordClients, peers.length, decision, o.signal);

    const targets = {
      coordinators: coordClients,
      peers: peerClients,
      gateways: gatewayModels(s),
      decision,
    };
    const run = new LoadGenerator(s, targets);
    o.signal?.removeEventListener("abort", onAbort);
    const stopRun = (): void => {
      interrupted = true;
      run.stop();
    };
    o.signal?.addEventListener("abort", stopRun, { once: true });
    // 2. warm-up, 3. measured load (drive.ts)
    driven = await driveLoad(run, s, progress, {
      interrupted: () => interrupted,
      coordinators: new Map([...coordClients].map(([name, c]) => [name, c.address])),
      onMeasureStart: () => (cpuAtStart = launcher.cpuSeconds()),
      onMeasureEnd: () => {
        const cpuAtEnd = launcher.cpuSeconds();
        if (cpuAtStart !== null && cpuAtEnd !== null) cpuMeasured = cpuAtEnd - cpuAtStart;
      },
    });
    o.signal?.removeEventListener("abort", stopRun);
    gen.calls.push(...run.calls);
    gen.measures.push(...run.measures);
    progress.done();
  } catch (error) {
    // Interrupted while starting or waiting for membership: nothing was measured, but the nodes are
    // stopped below and the report (interrupted: true) is still written, as for an interrupted run.
    if (!(interrupted && TailswarmError.is(error, "ABORTED"))) throw error;
    progress.done();
    progress.log(`interrupted: ${error.message}`);
  } finally {
    o.signal?.removeEventListener("abort", onAbort);
    gen.stop();
    for (const c of clients) c.close();
    progress.log("stopping every node...");
    const crashed = launcher.crashed().map((l) => l.id);
    const stop = await launcher.stopAll(3_000);
    processes = {
      peers: peers.length,
      coordinators: coordinators.length,
      node_processes: launcher.launched.length,
      layout: o.processes ?? "grouped",
      cpu_s_measured: cpuMeasured === null ? null : Math.round(cpuMeasured * 100) / 100,
      cores: availableParallelism(),
      startup_ms_max: Math.round(startupMax),
      startup_ms_all: Math.round(startupMsAll),
      crashed,
      killed_after_grace: stop.killed,
      left_running: stop.leftRunning,
    };
  }
  const report = driveReport({
    scenario: s,
    peers,
    decision,
    startedAt,
    interrupted,
    gen,
    driven,
    processes,
  });
  const table = formatTable(report);
  const files = await writeRunFiles(outDir, report, renderHtml(report), table, gen);
  return { report, table, files, pids: launcher.launched.map((l) => l.pid) };
}

async function waitReady(
  launcher: Launcher,
  clients: ReadonlyMap<string, SwarmClient>,
  timeoutMs: number,
  signal: AbortSignal | undefined,
  progress: Progress,
  t0: number,
): Promise<Map<string, number>> {
  const ready = new Map<string, number>();
  const until = t0 + timeoutMs;
  while (ready.size < clients.size) {
    if (signal?.aborted)
      throw new TailswarmError("ABORTED", "testbed interrupted while the nodes were starting");
    const crashed = launcher.crashed();
    if (crashed.length > 0) {
      const c = crashed[0]!;
      throw new TailswarmError(
        "INTERNAL",
        `node ${c.id} exited during startup (code ${c.exitCode ?? c.exitSignal}); see ${c.logFile}`,
      );
    }
    if (Date.now() > until) {
      const missing = [...clients.keys()].filter((id) => !ready.has(id));
      throw new TailswarmError(
        "DEADLINE_EXCEEDED",
        `startup: ${missing.length} node(s) not answering after ${timeoutMs} ms (${missing.slice(0, 5).join(", ")})`,
      );
    }
    await Promise.all(
      [...clients].map(async ([id, c]) => {
        if (ready.has(id)) return;
        const r = await c.probe(500);
        if (r.ok) ready.set(id, Date.now() - t0);
      }),
    );
    progress.update(
      "startup",
      (Date.now() - t0) / 1000,
      timeoutMs / 1000,
      `${ready.size}/${clients.size} nodes answering`,
    );
    if (ready.size < clients.size) await new Promise((r) => setTimeout(r, 200));
  }
  progress.done();
  return ready;
}

/** Until every coordinator fans out to every peer (its membership has probed them all). */
export async function waitMembership(
  coordinators: ReadonlyMap<string, SwarmClient>,
  peers: number,
  decision: unknown,
  signal: AbortSignal | undefined,
  timeoutMs = 30_000,
): Promise<void> {
  const until = Date.now() + timeoutMs;
  const pending = new Set(coordinators.keys());
  let last = "";
  while (pending.size > 0) {
    if (signal?.aborted)
      throw new TailswarmError("ABORTED", "testbed interrupted while waiting for membership");
    for (const name of [...pending]) {
      const r = await coordinators.get(name)!.coordinate({
        kind: "vote",
        payload: { question: "membership", truth: "hold" },
        policy: "always-sync",
        decision: "quorum-vote",
        options: decision,
        budgetMs: 2_000,
      });
      if (r.ok && r.value.branches.length >= peers) pending.delete(name);
      else
        last = r.ok
          ? `${name} sees ${r.value.branches.length}/${peers} peers`
          : `${name}: ${r.code} ${r.message}`;
    }
    if (pending.size === 0) break;
    if (Date.now() > until) {
      throw new TailswarmError(
        "DEADLINE_EXCEEDED",
        `membership: coordinators still missing peers after ${timeoutMs / 1000} s (${last})`,
      );
    }
    await new Promise((r) => setTimeout(r, 300));
  }
}
