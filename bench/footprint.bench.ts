/**
 * What one node process costs, to size Kubernetes requests and limits (deploy/kubernetes): a
 * coordinator and four peers, each `node dist/cli/main.js node` as the image runs it (Prometheus
 * port on, as the manifests have it, scraped every 5 s), measured from /proc — resident memory
 * (VmRSS at the end of each phase, VmHWM the peak so far) and CPU (utime + stime over wall time,
 * in cores) — idle, then under Coordinate load at FOOTPRINT_RATES (default 20 and 100 fan-outs a
 * second, each to all four peers, 1 s deadline), FOOTPRINT_PHASE_S seconds each (default 20); calls that
 * failed are counted, not retried. Needs `npm run build`.
 *
 *   npm run build && npm run bench -- footprint
 */
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { NodeClient } from "../src/node/client.js";
import { recordFigures } from "./report.js";
import type { Figure } from "./report.js";

const ROOT = join(fileURLToPath(import.meta.url), "..", "..");
const MAIN = join(ROOT, "dist", "cli", "main.js");
const RATES = (process.env.FOOTPRINT_RATES ?? "20,100").split(",").map(Number);
const PHASE_S = Number(process.env.FOOTPRINT_PHASE_S ?? 20);
const PEERS = 4;
const CLK_TCK = 100; // Linux USER_HZ

interface Proc {
  readonly name: string;
  readonly child: ChildProcess;
  readonly address: string;
  readonly metricsPort: number;
}

async function start(name: string, args: string[], metricsPort: number): Promise<Proc> {
  const child = spawn(
    process.execPath,
    [MAIN, "node", "--node-id", name, "--listen", "127.0.0.1:0", ...args],
    {
      env: {
        PATH: process.env.PATH ?? "",
        NODE_ENV: "production",
        TAILSWARM_METRICS_PROMETHEUS_PORT: String(metricsPort),
        OTEL_TRACES_EXPORTER: "none",
        OTEL_METRICS_EXPORTER: "none",
      },
      stdio: ["ignore", "ignore", "pipe"],
    },
  );
  const address = await new Promise<string>((resolve, reject) => {
    let buf = "";
    child.stderr.on("data", (d: Buffer) => {
      buf += d.toString();
      // One JSON object per line; pino writes `msg` last, so read the line, not its key order.
      for (const line of buf.split("\n")) {
        if (!line.startsWith("{")) continue;
        try {
          const l = JSON.parse(line) as { msg?: unknown; address?: unknown };
          if (l.msg === "listening" && typeof l.address === "string") resolve(l.address);
        } catch {
          // a line still being written
        }
      }
    });
    child.once("exit", (code) => reject(new Error(`${name} exited ${code}: ${buf.slice(-500)}`)));
  });
  return { name, child, address, metricsPort };
}

function sample(p: Proc): { rssMiB: number; hwmMiB: number; cpuS: number } {
  const status = readFileSync(`/proc/${p.child.pid}/status`, "utf8");
  const kib = (key: string): number => Number(new RegExp(`${key}:\\s+(\\d+) kB`).exec(status)?.[1] ?? NaN);
  const stat = readFileSync(`/proc/${p.child.pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const ticks = Number(fields[11]) + Number(fields[12]); // utime, stime
  return { rssMiB: kib("VmRSS") / 1024, hwmMiB: kib("VmHWM") / 1024, cpuS: ticks / CLK_TCK };
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Runs `fn` for `seconds`, with Prometheus scrapes every 5 s; returns CPU cores and memory per process. */
async function phase(procs: Proc[], seconds: number, fn?: (stopAt: number) => Promise<number>) {
  const before = procs.map(sample);
  const t0 = Date.now();
  const stopAt = t0 + seconds * 1000;
  const scrapes = (async () => {
    while (Date.now() < stopAt) {
      await Promise.all(
        procs.map((p) => fetch(`http://127.0.0.1:${p.metricsPort}/metrics`).then((r) => r.text())),
      );
      await sleep(Math.min(5_000, Math.max(0, stopAt - Date.now())));
    }
  })();
  const calls = fn === undefined ? (await sleep(seconds * 1000), 0) : await fn(stopAt);
  await scrapes;
  const wall = (Date.now() - t0) / 1000;
  const after = procs.map(sample);
  return {
    calls,
    perProc: procs.map((p, i) => ({
      name: p.name,
      cores: (after[i]!.cpuS - before[i]!.cpuS) / wall,
      rssMiB: after[i]!.rssMiB,
      hwmMiB: after[i]!.hwmMiB,
    })),
  };
}

/** Coordinates at `rate` per second, open loop (a call starts on schedule whether or not the last one ended). */
function load(
  client: NodeClient,
  rate: number,
  out: { errors: number; firstError: string },
): (stopAt: number) => Promise<number> {
  return async (stopAt) => {
    const inFlight: Promise<unknown>[] = [];
    let n = 0;
    for (let next = Date.now(); next < stopAt; next += 1000 / rate) {
      await sleep(Math.max(0, next - Date.now()));
      n++;
      inFlight.push(
        client.coordinate({ kind: "vote", payload: { question: `q${n}` } }, 1_000).catch((err: Error) => {
          out.errors++;
          out.firstError ||= err.message;
        }),
      );
    }
    await Promise.all(inFlight);
    return n;
  };
}

export async function run(): Promise<void> {
  if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: npm run build first`);
  const procs: Proc[] = [];
  try {
    for (let i = 0; i < PEERS; i++) procs.push(await start(`peer-${i}`, [], 19_500 + i));
    const coord = await start(
      "coordinator",
      ["--peers", procs.map((p) => p.address).join(","), "--probe-interval-ms", "1000"],
      19_500 + PEERS,
    );
    procs.push(coord);
    const client = new NodeClient(coord.address);
    for (let i = 0; i < 100 && (await client.status()).peers.filter((p) => p.up).length < PEERS; i++)
      await sleep(100);
    const figures: Record<string, Figure> = {};
    const report = (label: string, r: Awaited<ReturnType<typeof phase>>): void => {
      const peers = r.perProc.filter((p) => p.name !== "coordinator");
      const c = r.perProc.find((p) => p.name === "coordinator")!;
      const max = (k: "cores" | "rssMiB" | "hwmMiB"): number => Math.max(...peers.map((p) => p[k]));
      figures[`${label} coordinator CPU`] = { value: c.cores * 1000, unit: "millicores" };
      figures[`${label} coordinator RSS`] = { value: c.rssMiB, unit: "MiB" };
      figures[`${label} coordinator peak RSS`] = { value: c.hwmMiB, unit: "MiB" };
      figures[`${label} peer CPU (max of ${PEERS})`] = { value: max("cores") * 1000, unit: "millicores" };
      figures[`${label} peer RSS (max of ${PEERS})`] = { value: max("rssMiB"), unit: "MiB" };
      figures[`${label} peer peak RSS (max of ${PEERS})`] = { value: max("hwmMiB"), unit: "MiB" };
    };
    await sleep(5_000); // past start-up
    report("idle", await phase(procs, PHASE_S));
    for (const rate of RATES) {
      const failed = { errors: 0, firstError: "" };
      const r = await phase(procs, PHASE_S, load(client, rate, failed));
      report(`${rate}/s`, r);
      figures[`${rate}/s Coordinates sent`] = { value: r.calls, unit: "calls" };
      figures[`${rate}/s Coordinates failed`] = {
        value: failed.errors,
        unit: "calls",
        ...(failed.firstError !== "" && { note: failed.firstError.slice(0, 120) }),
      };
    }
    client.close();
    recordFigures(`footprint (${PEERS} peers + coordinator, ${PHASE_S} s phases)`, figures);
  } finally {
    for (const p of procs) p.child.kill("SIGKILL");
  }
}
