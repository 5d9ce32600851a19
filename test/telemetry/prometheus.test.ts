/**
 * A real Prometheus (Debian's `prometheus`, /usr/bin/prometheus; scripts/ensure-prometheus.sh installs
 * it) scrapes the Prometheus endpoint of a process running fan-outs with the telemetry SDK; the test
 * asks Prometheus's HTTP API for the `tailswarm` series.
 */
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { systemClock } from "../../src/clock/clock.js";
import { Coordinator } from "../../src/engine/coordinator.js";
import { MemoryTransport } from "../../src/engine/memory-transport.js";
import { LatencyBook } from "../../src/estimate/latency-book.js";
import { startTelemetry } from "../../src/telemetry/sdk/setup.js";
import type { TelemetrySdk } from "../../src/telemetry/sdk/setup.js";
import { createTelemetry } from "../../src/telemetry/telemetry.js";
import type { Telemetry } from "../../src/telemetry/telemetry.js";
import { collectModel, task } from "./helpers.js";

const PROMETHEUS = "/usr/bin/prometheus";
const have = existsSync(PROMETHEUS);

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address() as AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

interface Sample {
  metric: Record<string, string>;
  value: [number, string];
}

let sdk: TelemetrySdk;
let telemetry: Telemetry;
let prom: ChildProcess | undefined;
let dir = "";
let api = "";

async function query(q: string): Promise<Sample[]> {
  const res = await fetch(`${api}/api/v1/query?query=${encodeURIComponent(q)}`);
  const body = (await res.json()) as { status: string; data: { result: Sample[] } };
  expect(body.status).toBe("success");
  return body.data.result;
}

/** Polls `q` until it returns series (Prometheus scrapes every 500 ms). */
async function until(q: string, timeoutMs = 20_000): Promise<Sample[]> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const r = await query(q);
    if (r.length > 0 || Date.now() > end) return r;
    await new Promise((ok) => setTimeout(ok, 250));
  }
}

describe.skipIf(!have)("Prometheus scrapes a node's tailswarm metrics", () => {
  beforeAll(async () => {
    sdk = await startTelemetry({
      serviceName: "tailswarm-prom-test",
      prometheusPort: 0,
      prometheusHost: "127.0.0.1",
      env: { OTEL_TRACES_EXPORTER: "none", OTEL_METRICS_EXPORTER: "none" },
    });
    const book = new LatencyBook({ windowMs: 60_000, minSamples: 5 }, systemClock);
    telemetry = createTelemetry({ estimates: book });
    const transport = new MemoryTransport(systemClock, { seed: 1 });
    transport.addPeer("fast-1", { latency: 2, handler: () => "a" });
    transport.addPeer("fast-2", { latency: 3, handler: () => "b" });
    transport.addPeer("slow", { latency: 400, handler: () => "c" });
    for (const p of ["fast-1", "fast-2", "slow"])
      for (let i = 0; i < 20; i++) book.record(p, 5, systemClock.now());
    const coordinator = new Coordinator({
      transport: telemetry.wrapTransport(transport),
      book,
      observer: telemetry.observer,
      nodeId: "prom-node",
    });
    const model = collectModel();
    await coordinator.fanOut(task, { peers: ["fast-1", "fast-2"], budgetMs: 200, model });
    await coordinator.fanOut(task, { peers: ["fast-1", "fast-2", "slow"], budgetMs: 60, model });
    await coordinator.fanOut(task, { peers: ["fast-1"], budgetMs: 1, model, fallback: () => "local" });

    const port = await freePort();
    dir = mkdtempSync(join(tmpdir(), "tailswarm-prom-"));
    writeFileSync(
      join(dir, "prometheus.yml"),
      [
        "global:",
        "  scrape_interval: 500ms",
        "scrape_configs:",
        "  - job_name: tailswarm",
        "    static_configs:",
        `      - targets: ["127.0.0.1:${sdk.prometheus!.port}"]`,
        "",
      ].join("\n"),
    );
    prom = spawn(
      PROMETHEUS,
      [
        `--config.file=${join(dir, "prometheus.yml")}`,
        `--storage.tsdb.path=${join(dir, "data")}`,
        `--web.listen-address=127.0.0.1:${port}`,
        "--log.level=warn",
      ],
      { stdio: "ignore" },
    );
    api = `http://127.0.0.1:${port}`;
    const end = Date.now() + 30_000;
    for (;;) {
      const ready = await fetch(`${api}/-/ready`).then(
        (r) => r.ok,
        () => false,
      );
      if (ready) break;
      if (Date.now() > end) throw new Error("prometheus did not become ready");
      await new Promise((ok) => setTimeout(ok, 200));
    }
  }, 60_000);

  afterAll(async () => {
    prom?.kill("SIGTERM");
    telemetry?.close();
    await sdk?.shutdown();
    if (dir !== "") rmSync(dir, { recursive: true, force: true });
  });

  it("finds fan-outs by mode and reason, branches by outcome and relevance, with non-zero values", async () => {
    const fanouts = await until('tailswarm_fanouts_total{job="tailswarm"}');
    const modes = fanouts.map((s) => `${s.metric["tailswarm_mode"]}/${s.metric["tailswarm_reason"]}`).sort();
    expect(modes).toEqual([
      "degrade/budget-at-or-below-p50",
      "speculate/budget-exceeds-p99-plus-abandon-cost",
    ]);
    const spec = fanouts.find((s) => s.metric["tailswarm_mode"] === "speculate")!;
    expect(Number(spec.value[1])).toBe(2);

    const committed = await until('tailswarm_branches_total{tailswarm_branch_outcome="committed"}');
    expect(committed[0]!.metric["tailswarm_decision_relevant"]).toBe("true");
    expect(Number(committed.reduce((n, s) => n + Number(s.value[1]), 0))).toBe(4);
    // the slow peer's branch: abandoned at the deadline (or late, when a loaded machine went synchronous)
    const abandoned = await until('tailswarm_branches_total{tailswarm_branch_outcome=~"abandoned|late"}');
    expect(abandoned.reduce((n, s) => n + Number(s.value[1]), 0)).toBe(1);
    const lost = await until("tailswarm_abandon_lost_work_total");
    expect(Number(lost[0]!.value[1])).toBeGreaterThan(0);
  });

  it("computes the commit rate and the decision-relevant commit rate in PromQL", async () => {
    await until("tailswarm_branches_total");
    const commit = await query(
      'sum(tailswarm_branches_total{tailswarm_branch_outcome="committed"}) / sum(tailswarm_branches_total)',
    );
    expect(Number(commit[0]!.value[1])).toBeCloseTo(4 / 5);
    const relevant = await query(
      'sum(tailswarm_branches_total{tailswarm_branch_outcome=~"committed|partial",tailswarm_decision_relevant="true"})' +
        ' / sum(tailswarm_branches_total{tailswarm_branch_outcome=~"committed|partial"})',
    );
    expect(Number(relevant[0]!.value[1])).toBe(1);
  });

  it("has per-peer p99 and sample gauges from the estimator", async () => {
    const p99 = await until("tailswarm_peer_latency_p99");
    expect(p99.map((s) => s.metric["tailswarm_peer"]).sort()).toEqual(["fast-1", "fast-2", "slow"]);
    expect(p99.every((s) => Number(s.value[1]) > 0)).toBe(true);
    const samples = await until('tailswarm_peer_latency_samples{tailswarm_peer="fast-1"}');
    expect(Number(samples[0]!.value[1])).toBeGreaterThanOrEqual(20);
    const budget = await until("tailswarm_fanout_budget_count");
    expect(budget.length).toBeGreaterThan(0);
  });
});
