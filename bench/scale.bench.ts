/**
 * What a node costs as the swarm grows: swarms of SCALE_SIZES nodes (default 50, 200 and 500) run with
 * `tailswarm host` (SCALE_NODES_PER_PROCESS nodes per process, default 125), every node on its own
 * loopback address (127.23.x.y:7400), each listing every address as a static peer and keeping a subset
 * of SCALE_ACTIVE (default 20) — so its fan-outs, and its active set, are about that size. Per size:
 *
 * - ready: every node sees its subset up, within SCALE_READY_S (default 240).
 * - on: every node coordinates at SCALE_RATE per second (default 0.05, open loop, staggered), 2 s
 *   deadlines; off: no Coordinate at all, SCALE_PHASE_S seconds each (default 20). Each node's
 *   estimator window is SCALE_WINDOW_S (default 30), so that at that rate its active set stays in use
 *   between its fan-outs. The swarm-wide rate, nodes × SCALE_RATE, is what the machine must carry:
 *   at 0.2/s a node coordinating cost ~5 millicores here, which at 500 nodes is more than 2 cores.
 * - per node: CPU (the host processes' utime + stime over the phase, / nodes), RSS (/ nodes: the
 *   process's runtime is shared by its nodes), sockets (socket fds of the host processes / nodes: a
 *   node's channels and the connections peers opened to it), probes sent per second (Status
 *   `probes_sent`), fan-outs answered by their deadline.
 * - CPU with coordination off is what a node spends on membership, health and its idle server (no
 *   fan-out runs): the figure that must not grow with the swarm.
 * - the kill: at the end of the largest size, one node (alone in its own process) is SIGKILLed while the
 *   others coordinate, and the nodes that had it live (its holders) at SCALE_KILL_RATE per second
 *   (default 0.5), so that their branches to it fail; the bench polls every holder (Status, every
 *   250 ms) until each has it ejected (health) or down (membership), and prints the time from each
 *   holder's last failed branch to the victim (Status `last_bad_branch_unix_ms`) to that poll, from
 *   the kill to that poll, and the swarm's probe rate before and after.
 *
 *   npm run build && npm run bench -- scale
 */
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { Coordinator } from "../src/engine/coordinator.js";
import { LatencyBook } from "../src/estimate/latency-book.js";
import { predicateModel } from "../src/decision/predicate-model.js";
import { GrpcTransport } from "../src/mesh/grpc-transport.js";
import { NodeClient } from "../src/node/client.js";
import { Launcher } from "../src/testbed/launcher.js";
import type { Launched, LaunchSpec } from "../src/testbed/launcher.js";
import { recordFigures } from "./report.js";
import type { Figure } from "./report.js";

const ROOT = join(fileURLToPath(import.meta.url), "..", "..");
const MAIN = join(ROOT, "dist", "cli", "main.js");
/** Preloaded into the host processes: their event-loop delay and CPU, second by second (scale-loop.mjs). */
const LOOP_MONITOR = pathToFileURL(join(ROOT, "bench", "scale-loop.mjs")).href;
const SIZES = (process.env.SCALE_SIZES ?? "50,200,500").split(",").map(Number);
const PER_PROCESS = Number(process.env.SCALE_NODES_PER_PROCESS ?? 125);
const ACTIVE = Number(process.env.SCALE_ACTIVE ?? 20);
const RATE = Number(process.env.SCALE_RATE ?? 0.05);
/** The nodes' estimator window (`estimator.windowMs`), s: longer than 1 / RATE keeps their peers in use. */
const WINDOW_S = Number(process.env.SCALE_WINDOW_S ?? 30);
/** The holders' Coordinate rate during the kill, per second. */
const KILL_RATE = Number(process.env.SCALE_KILL_RATE ?? 0.5);
const PHASE_S = Number(process.env.SCALE_PHASE_S ?? 20);
/** How long a swarm may take until every node sees its subset up, s. */
const READY_S = Number(process.env.SCALE_READY_S ?? 240);
const DEADLINE_MS = 2_000;
const PORT = 7400;
const CLK_TCK = 100; // Linux USER_HZ

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function addressOf(i: number): string {
  return `127.23.${Math.floor(i / 250)}.${(i % 250) + 1}:${PORT}`;
}

function nodeConfig(i: number, all: readonly string[]): LaunchSpec {
  return {
    id: `n${i}`,
    config: {
      nodeId: `n${i}`,
      listen: all[i],
      peers: all,
      probe: { intervalMs: 1_000 },
      membership: { subsetSize: ACTIVE },
      estimator: { windowMs: WINDOW_S * 1000 },
      logLevel: "warn",
    },
  };
}

interface ProcSample {
  readonly cpuS: number;
  readonly rssMiB: number;
  readonly sockets: number;
}

function sample(pid: number): ProcSample {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const rssKiB = Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? NaN);
  let sockets = 0;
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      if (readlinkSync(`/proc/${pid}/fd/${fd}`).startsWith("socket:")) sockets++;
    } catch {
      // closed while listing
    }
  }
  return {
    cpuS: (Number(fields[11]) + Number(fields[12])) / CLK_TCK,
    rssMiB: rssKiB / 1024,
    sockets,
  };
}

function sum(xs: readonly number[]): number {
  return xs.reduce((a, b) => a + b, 0);
}

interface Swarm {
  readonly launcher: Launcher;
  readonly dir: string;
  readonly hosts: Launched[];
  readonly victim: Launched;
  readonly clients: NodeClient[];
  readonly addresses: string[];
}

async function startSwarm(n: number): Promise<Swarm> {
  const dir = mkdtempSync(join(tmpdir(), "tailswarm-scale-"));
  const launcher = new Launcher(dir, MAIN);
  const addresses = Array.from({ length: n }, (_, i) => addressOf(i));
  // the launcher passes this process's environment on: the monitor is preloaded into the hosts only
  const env = { NODE_OPTIONS: process.env.NODE_OPTIONS, SCALE_LOOP_DIR: process.env.SCALE_LOOP_DIR };
  process.env.NODE_OPTIONS = `${env.NODE_OPTIONS ?? ""} --import=${LOOP_MONITOR}`.trim();
  process.env.SCALE_LOOP_DIR = dir;
  const hosts: Launched[] = [];
  let victim: Launched;
  try {
    victim = await launcher.startHost({ id: "victim", nodes: [nodeConfig(0, addresses)] });
    for (let from = 1; from < n; from += PER_PROCESS) {
      const nodes: LaunchSpec[] = [];
      for (let i = from; i < Math.min(n, from + PER_PROCESS); i++) nodes.push(nodeConfig(i, addresses));
      hosts.push(await launcher.startHost({ id: `host-${hosts.length}`, nodes }));
    }
  } finally {
    for (const [k, v] of Object.entries(env)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
  const clients = addresses.map((a) => new NodeClient(a));
  return { launcher, dir, hosts, victim, clients, addresses };
}

async function stopSwarm(s: Swarm, keepLogs: boolean): Promise<void> {
  for (const c of s.clients) c.close();
  const r = await s.launcher.stopAll();
  if (r.leftRunning.length > 0) throw new Error(`processes left running: ${r.leftRunning.join(", ")}`);
  if (keepLogs) console.error(`scale: the nodes' configs and logs are in ${s.dir}`);
  else rmSync(s.dir, { recursive: true, force: true });
}

/** Waits until every node answers Status and sees at least `want` peers up; returns the seconds it took. */
async function ready(s: Swarm, want: number, timeoutMs: number): Promise<number> {
  const t0 = Date.now();
  const pending = new Set(s.clients.keys());
  while (pending.size > 0) {
    if (Date.now() - t0 > timeoutMs) {
      throw new Error(`${pending.size} of ${s.clients.length} nodes not ready after ${timeoutMs} ms`);
    }
    await pooled([...pending], 16, async (i) => {
      try {
        const st = await s.clients[i]!.status(5_000, { omitPeers: true });
        if (st.peersUp >= want) pending.delete(i);
      } catch {
        // not listening yet
      }
    });
    if (pending.size > 0) await sleep(500);
  }
  return (Date.now() - t0) / 1000;
}

/** `fn` over `items`, at most `limit` at a time. */
async function pooled<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < items.length) {
        const k = next++;
        out[k] = await fn(items[k] as T);
      }
    }),
  );
  return out;
}

async function probesSent(s: Swarm, skip: ReadonlySet<number>): Promise<number> {
  const counts = await pooled([...s.clients.keys()], 16, (i) =>
    skip.has(i)
      ? Promise.resolve(0)
      : s.clients[i]!.status(20_000, { omitPeers: true }).then((st) => Number(st.probesSent)),
  );
  return sum(counts);
}

interface Load {
  sent: number;
  /** Answered in time with at least one peer's answer. */
  ok: number;
  /** Answered in time with the prior: the fan-out ran but no peer answered (`noAnswer`). */
  noAnswer: number;
  late: number;
  failed: number;
  firstError: string;
}

/** `nodes` (default: every node but `skip`) coordinate at `rate` per second each until `stopAt`, staggered. */
async function coordinate(
  s: Swarm,
  stopAt: number,
  skip: ReadonlySet<number>,
  rate = RATE,
  nodes: readonly number[] = [...s.clients.keys()],
): Promise<Load> {
  const out: Load = { sent: 0, ok: 0, noAnswer: 0, late: 0, failed: 0, firstError: "" };
  const calls: Promise<void>[] = [];
  const period = 1000 / rate;
  const n = nodes.length;
  const t0 = Date.now();
  for (let k = 0; ; k++) {
    // the m-th node's j-th call at t0 + (m / n + j) · period: one call every period / n across them
    const i = nodes[k % n]!;
    const at = t0 + (k / n) * period;
    if (at >= stopAt) break;
    if (skip.has(i)) continue;
    await sleep(Math.max(0, at - Date.now()));
    out.sent++;
    const started = Date.now();
    calls.push(
      s.clients[i]!.coordinate({ kind: "vote", payload: { question: `q${k}` } }, DEADLINE_MS).then(
        (r) => {
          if (Date.now() - started > DEADLINE_MS) out.late++;
          else if (r.noAnswer) out.noAnswer++;
          else out.ok++;
        },
        (err: Error) => {
          out.failed++;
          out.firstError ||= err.message;
        },
      ),
    );
  }
  await Promise.all(calls);
  return out;
}

interface LoopDelay {
  /** The longest any host process's event loop was held, ms. */
  readonly maxMs: number;
  /** The median over the hosts' seconds of each second's p99 delay, ms. */
  readonly p99MedianMs: number;
}

/** The host processes' event-loop delay between `fromMs` and `toMs` (epoch), from scale-loop.mjs's files. */
function loopDelay(s: Swarm, fromMs: number, toMs: number): LoopDelay {
  const seconds: { maxMs: number; p99Ms: number }[] = [];
  for (const h of s.hosts) {
    let text = "";
    try {
      text = readFileSync(join(s.dir, `${h.pid}.jsonl`), "utf8");
    } catch {
      continue; // the monitor did not write (yet)
    }
    for (const line of text.split("\n")) {
      if (line === "") continue;
      const x = JSON.parse(line) as { t: number; maxMs: number; p99Ms: number };
      if (x.t > fromMs && x.t <= toMs) seconds.push(x);
    }
  }
  const p99s = seconds.map((x) => x.p99Ms).sort((a, b) => a - b);
  return {
    maxMs: seconds.length === 0 ? NaN : Math.max(...seconds.map((x) => x.maxMs)),
    p99MedianMs: p99s[p99s.length >> 1] ?? NaN,
  };
}

interface PhaseResult {
  readonly cpuPerNodeMs: number;
  readonly rssPerNodeMiB: number;
  readonly socketsPerNode: number;
  readonly probesPerNodePerS: number;
  readonly loop: LoopDelay;
  readonly load?: Load;
}

async function phase(s: Swarm, on: boolean): Promise<PhaseResult> {
  const nodes = s.clients.length - 1; // the victim's process is not counted
  const skip = new Set([0]);
  const pids = s.hosts.map((h) => h.pid);
  const probes0 = await probesSent(s, skip);
  const before = pids.map(sample);
  const t0 = Date.now();
  const stopAt = t0 + PHASE_S * 1000;
  const load = on ? await coordinate(s, stopAt, new Set()) : undefined;
  await sleep(Math.max(0, stopAt - Date.now()));
  const after = pids.map(sample);
  const wall = (Date.now() - t0) / 1000;
  const probes1 = await probesSent(s, skip);
  return {
    cpuPerNodeMs: (1000 * (sum(after.map((a) => a.cpuS)) - sum(before.map((b) => b.cpuS)))) / wall / nodes,
    rssPerNodeMiB: sum(after.map((a) => a.rssMiB)) / nodes,
    socketsPerNode: sum(after.map((a) => a.sockets)) / nodes,
    probesPerNodePerS: (probes1 - probes0) / wall / nodes,
    loop: loopDelay(s, t0, stopAt),
    ...(load !== undefined && { load }),
  };
}

/**
 * A fan-out from this process to every node of the swarm but the victim, all answers required
 * (always-sync, 5 s budget), FANOUTS times: answered, wall time, the transport's send CPU per branch,
 * its batches, and the longest this process's event loop was held (delay monitor, 1 ms resolution).
 */
async function wideFanout(s: Swarm, figures: Record<string, Figure>): Promise<void> {
  const FANOUTS = 5;
  const peers = s.addresses.slice(1);
  const transport = new GrpcTransport();
  const coordinator = new Coordinator({ transport, book: new LatencyBook(), nodeId: "bench" });
  const model = predicateModel<unknown, string>({
    prior: "none",
    decide: () => "answered",
    canFlip: () => true,
  });
  const run = () =>
    coordinator.fanOut(
      { kind: "echo", payload: { x: 1 } },
      { peers, budgetMs: 5_000, model, policy: "always-sync" },
    );
  try {
    await run(); // connects
    const before = transport.sendStats();
    const loop = monitorEventLoopDelay({ resolution: 1 });
    loop.enable();
    const answered: number[] = [];
    const wall: number[] = [];
    for (let i = 0; i < FANOUTS; i++) {
      const t0 = performance.now();
      const o = await run();
      wall.push(performance.now() - t0);
      answered.push(o.answered);
    }
    loop.disable();
    const after = transport.sendStats();
    const branches = after.branches - before.branches;
    const label = `fan-out to ${peers.length} required peers over gRPC`;
    figures[`${label}: answered (worst of ${FANOUTS})`] = {
      value: Math.min(...answered),
      unit: `of ${peers.length}`,
    };
    figures[`${label}: wall time (median of ${FANOUTS})`] = {
      value: wall.sort((a, b) => a - b)[FANOUTS >> 1] ?? NaN,
      unit: "ms",
    };
    figures[`${label}: send CPU per branch`] = {
      value: (after.cpuMicros - before.cpuMicros) / branches,
      unit: "µs",
    };
    figures[`${label}: send batches per fan-out`] = {
      value: (after.batches - before.batches) / FANOUTS,
      unit: "",
    };
    figures[`${label}: longest event-loop delay meanwhile`] = { value: loop.max / 1e6, unit: "ms" };
  } finally {
    transport.close();
  }
}

/**
 * Kills the victim while the others coordinate (its holders, the nodes that had it live, at KILL_RATE,
 * so each sends it branches that fail); how long until each holder has it out of its fan-outs.
 */
async function killTest(s: Swarm, figures: Record<string, Figure>, n: number): Promise<void> {
  const victim = "n0";
  const skip = new Set([0]);
  const had = (
    await pooled([...s.clients.keys()], 16, async (i) =>
      i === 0
        ? -1
        : (await s.clients[i]!.status(20_000, { peerIds: [victim] })).peers.some((p) => p.up)
          ? i
          : -1,
    )
  ).filter((i) => i >= 0);
  const windowS = 5;
  const loadStop = Date.now() + (2 * windowS + 10) * 1000;
  const load = coordinate(s, loadStop, skip);
  const holderLoad = coordinate(s, loadStop, skip, KILL_RATE, had);
  await sleep(2_000);
  const p0 = await probesSent(s, skip);
  await sleep(windowS * 1000);
  const p1 = await probesSent(s, skip);
  const killedAt = Date.now();
  process.kill(-s.victim.pid, "SIGKILL");
  const outAfter = new Map<number, number>();
  /** Per node: seen out this long after its last bad branch to the victim (at most: polled every 250 ms). */
  const sinceBad: number[] = [];
  let ejected = 0;
  const pollUntil = killedAt + 15_000;
  let probeAfter = NaN;
  while (outAfter.size < had.length && Date.now() < pollUntil) {
    await Promise.all(
      had
        .filter((i) => !outAfter.has(i))
        .map(async (i) => {
          const st = await s.clients[i]!.status(2_000, { peerIds: [victim] }).catch(() => undefined);
          if (st === undefined) return;
          const row = st.peers.find((p) => p.peerId === victim);
          const isEjected = st.ejectedPeers.includes(victim);
          if (isEjected || row === undefined || !row.up) {
            const now = Date.now();
            outAfter.set(i, (now - killedAt) / 1000);
            if (isEjected) ejected++;
            const bad = row?.lastBadBranchUnixMs ?? -1; // branches only, not probes
            if (bad >= killedAt) sinceBad.push((now - bad) / 1000);
          }
        }),
    );
    await sleep(250);
  }
  const elapsed = (Date.now() - killedAt) / 1000;
  if (elapsed < windowS) await sleep((windowS - elapsed) * 1000);
  const p2 = await probesSent(s, skip);
  probeAfter = (p2 - p1) / ((Date.now() - killedAt) / 1000);
  const done = await load;
  const holders = await holderLoad;
  const loop = loopDelay(s, killedAt, Date.now());
  const times = [...outAfter.values()].sort((a, b) => a - b);
  const label = `kill (${n} nodes)`;
  figures[`${label}: nodes that had the victim live`] = { value: had.length, unit: "nodes" };
  figures[`${label}: of them, out (ejected or down) within 15 s`] = { value: times.length, unit: "nodes" };
  figures[`${label}: out within 2 s of the kill`] = {
    value: times.filter((t) => t <= 2).length,
    unit: "nodes",
  };
  sinceBad.sort((a, b) => a - b);
  figures[`${label}: of them, out by health ejection (the rest: down by probes)`] = {
    value: ejected,
    unit: "nodes",
  };
  figures[`${label}: holders with a failed branch to it after the kill`] = {
    value: sinceBad.length,
    unit: `of ${had.length}`,
  };
  figures[`${label}: seen out after its last failed branch, max (poll 250 ms)`] = {
    value: sinceBad.at(-1) ?? NaN,
    unit: "s",
  };
  figures[`${label}: seen out after its last failed branch, median`] = {
    value: sinceBad[sinceBad.length >> 1] ?? NaN,
    unit: "s",
  };
  figures[`${label}: seen out within 2 s of its last failed branch`] = {
    value: sinceBad.filter((t) => t <= 2).length,
    unit: `of ${sinceBad.length}`,
  };
  figures[`${label}: time from kill to out, max`] = { value: times.at(-1) ?? NaN, unit: "s" };
  figures[`${label}: time from kill to out, median`] = { value: times[times.length >> 1] ?? NaN, unit: "s" };
  figures[`${label}: swarm probe rate before`] = { value: (p1 - p0) / windowS, unit: "probes/s" };
  figures[`${label}: swarm probe rate after (from the kill)`] = { value: probeAfter, unit: "probes/s" };
  figures[`${label}: host event-loop delay from the kill, longest`] = { value: loop.maxMs, unit: "ms" };
  figures[`${label}: fan-outs answered by the deadline during it`] = {
    value: done.ok,
    unit: `of ${done.sent}`,
  };
  figures[`${label}: holders' fan-outs (${KILL_RATE}/s each) answered by the deadline during it`] = {
    value: holders.ok,
    unit: `of ${holders.sent}`,
  };
}

export async function run(): Promise<void> {
  const figures: Record<string, Figure> = {};
  figures["1-minute load average at start (machine has 2 cores)"] = { value: loadavg()[0] ?? NaN, unit: "" };
  const largest = Math.max(...SIZES);
  for (const n of SIZES) {
    const s = await startSwarm(n);
    let ok = false;
    try {
      figures[`${n} nodes: load average at start`] = { value: loadavg()[0] ?? NaN, unit: "" };
      // the subset may hold the node's own address
      const want = Math.min(ACTIVE, n - 1) - 1;
      const startS = await ready(s, want, READY_S * 1000);
      figures[`${n} nodes: ready (every node sees ${want} peers up)`] = {
        value: startS,
        unit: "s",
      };
      const on = await phase(s, true);
      const off = await phase(s, false);
      const l = on.load!;
      const row = (k: string, value: number, unit: string): void => {
        figures[`${n} nodes: ${k}`] = { value, unit };
      };
      row("CPU per node, coordination off (membership, health, idle server)", off.cpuPerNodeMs, "millicores");
      row(`CPU per node, coordinating ${RATE}/s`, on.cpuPerNodeMs, "millicores");
      row("probes sent per node, coordination off", off.probesPerNodePerS, "/s");
      row(`probes sent per node, coordinating`, on.probesPerNodePerS, "/s");
      row("host event-loop delay, coordination off: longest", off.loop.maxMs, "ms");
      row("host event-loop delay, coordinating: longest", on.loop.maxMs, "ms");
      row("host event-loop delay, coordinating: median of each second's p99", on.loop.p99MedianMs, "ms");
      row("RSS per node (host processes / nodes)", on.rssPerNodeMiB, "MiB");
      row("sockets per node (host processes / nodes)", on.socketsPerNode, "");
      row(`fan-outs answered by their ${DEADLINE_MS} ms deadline`, l.ok, `of ${l.sent}`);
      row("fan-outs answered in time with the prior, no peer having answered", l.noAnswer, `of ${l.sent}`);
      if (l.firstError !== "") console.log(`${n} nodes: first failed fan-out: ${l.firstError.slice(0, 300)}`);
      if (l.failed + l.late > 0) {
        figures[`${n} nodes: fan-outs failed or late`] = {
          value: l.failed + l.late,
          unit: "calls",
          ...(l.firstError !== "" && { note: l.firstError.slice(0, 120) }),
        };
      }
      if (n === largest) {
        await wideFanout(s, figures);
        await killTest(s, figures, n);
      }
      ok = true;
    } catch (err) {
      figures[`${n} nodes: run failed`] = {
        value: NaN,
        unit: "",
        note: (err as Error).message.slice(0, 160),
      };
    } finally {
      await stopSwarm(s, !ok);
      recordFigures(
        `scale (${SIZES.join("/")} nodes; so far ${n}; subset ${ACTIVE}, ${RATE}/s per node, ${WINDOW_S} s window, ${PHASE_S} s phases)`,
        figures,
      );
    }
    if (!ok) break; // a larger swarm on the same machine fares no better
  }
}
