/**
 * `docker/testbed.sh --small --observability`: the generated swarm of `smoke` with its generated
 * observability overlay. While the load runs, this test asks Prometheus over its HTTP API (the
 * loopback port the script prints; a free one, TAILSWARM_PROMETHEUS_PORT empty) which nodes it has
 * tailswarm_* series from: every generated peer and coordinator, by the `node` label the generated
 * scrape config gives it, and fan-outs counted on the coordinators. Afterwards: the run passed, the
 * dashboard's panels were evaluated against Prometheus (OUT/dashboard.json) with data in the mode
 * mix and per-peer p99 panels, and nothing with the project label is left.
 *
 * Without an image registry Prometheus is Debian's package on the offline base and the collector,
 * Jaeger and Grafana are left out (docker/observability-images.sh); with one they run too, and this
 * test asserts the same. Skipped unless TAILSWARM_DOCKER_TESTS=1; TAILSWARM_TESTBED_NO_BUILD=1 uses
 * $TAILSWARM_IMAGE as it is.
 */
import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { expectNothingLeft } from "./helpers/compose-project.js";
import { loadScenario } from "../../src/testbed/scenario-loader.js";
import { planPeers } from "../../src/testbed/topology.js";

const enabled = process.env.TAILSWARM_DOCKER_TESTS === "1";
const repo = fileURLToPath(new URL("../..", import.meta.url));

interface Vector {
  metric: Record<string, string>;
  value: [number, string];
}

async function instant(url: string, query: string): Promise<Vector[]> {
  const res = await fetch(`${url}/api/v1/query?${new URLSearchParams({ query }).toString()}`, {
    signal: AbortSignal.timeout(5_000),
  });
  const body = (await res.json()) as { status: string; data: { result: Vector[] } };
  return body.status === "success" ? body.data.result : [];
}

interface Seen {
  /** job -> nodes with at least one tailswarm_* series */
  nodes: Map<string, Set<string>>;
  /** coordinator node -> fan-outs counted */
  fanouts: Map<string, number>;
}

async function observe(url: string): Promise<Seen> {
  const nodes = new Map<string, Set<string>>();
  for (const r of await instant(url, 'count by (job, node) ({__name__=~"tailswarm_.+"})')) {
    const job = r.metric.job ?? "";
    if (!nodes.has(job)) nodes.set(job, new Set());
    nodes.get(job)!.add(r.metric.node ?? "");
  }
  const fanouts = new Map<string, number>();
  for (const r of await instant(
    url,
    'sum by (node) (tailswarm_fanout_decisions_total{job="tailswarm-coordinators"})',
  )) {
    fanouts.set(r.metric.node ?? "", Number(r.value[1]));
  }
  return { nodes, fanouts };
}

describe.skipIf(!enabled)("docker/testbed.sh --small --observability", () => {
  let out = "";
  afterAll(async () => {
    if (out !== "") await rm(out, { recursive: true, force: true });
  });

  it("Prometheus has tailswarm_* series from every generated node; the dashboard's panels have data", async () => {
    const s = await loadScenario("smoke");
    const peers = planPeers(s).map((p) => p.id);
    const coordinators = s.coordinators.map((c) => c.name);
    out = await mkdtemp(join(tmpdir(), "tailswarm-docker-obs-"));
    const args = ["docker/testbed.sh", "--small", "--observability", "--duration", "20", "--out", out];
    if (process.env.TAILSWARM_TESTBED_NO_BUILD === "1") args.push("--no-build");

    const child = spawn("bash", args, {
      cwd: repo,
      env: { ...process.env, TAILSWARM_PROMETHEUS_PORT: "" },
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (d: string) => (stderr += d));
    const exited = new Promise<number>((resolve) => child.on("exit", (code) => resolve(code ?? 1)));
    let done = false;
    void exited.then(() => (done = true));
    const timer = setTimeout(() => child.kill("SIGTERM"), 840_000);

    // While the swarm runs: ask Prometheus until every node has series and every coordinator fanned out.
    let seen: Seen = { nodes: new Map(), fanouts: new Map() };
    let url: string | undefined;
    while (!done) {
      url ??= /testbed: prometheus (http:\/\/127\.0\.0\.1:\d+)/.exec(stderr)?.[1];
      if (url !== undefined) {
        seen = await observe(url).catch(() => seen);
        const complete =
          (seen.nodes.get("tailswarm-peers")?.size ?? 0) === peers.length &&
          (seen.nodes.get("tailswarm-coordinators")?.size ?? 0) === coordinators.length &&
          coordinators.every((c) => (seen.fanouts.get(c) ?? 0) > 0);
        if (complete) break;
      }
      await new Promise((r) => setTimeout(r, 2_000));
    }
    const code = await exited;
    clearTimeout(timer);
    expect(code, stderr).toBe(0);
    expect(url, stderr).toBeDefined();
    expect([...(seen.nodes.get("tailswarm-peers") ?? [])].sort()).toEqual([...peers].sort());
    expect([...(seen.nodes.get("tailswarm-coordinators") ?? [])].sort()).toEqual([...coordinators].sort());
    for (const c of coordinators) expect(seen.fanouts.get(c), c).toBeGreaterThan(0);

    // The dashboard's panels, evaluated against the same Prometheus before the teardown.
    const dashboard = JSON.parse(await readFile(join(out, "dashboard.json"), "utf8")) as {
      targets: Record<string, [number, number]>;
      panels: { title: string; targets: { series: { labels: Record<string, string>; value: number }[] }[] }[];
    };
    expect(dashboard.targets["tailswarm-peers"]![0]).toBe(peers.length);
    expect(dashboard.targets["tailswarm-coordinators"]![0]).toBe(coordinators.length);
    const panel = (prefix: string) => dashboard.panels.find((p) => p.title.startsWith(prefix))!;
    expect(panel("Mode mix").targets[0]!.series.length).toBeGreaterThan(0);
    const p99 = panel("Per-peer p99").targets[0]!.series.map((x) => x.labels.tailswarm_peer);
    expect(p99.sort()).toEqual([...peers].sort());

    // Nothing with the project label is left.
    const project = /tearing down (tailswarm-tb-\d+)/.exec(stderr)?.[1];
    expect(project, stderr).toBeDefined();
    await expectNothingLeft(project!);
  }, 900_000);
});
