/**
 * `tailswarm testbed --emit-compose`: the containerised swarm agrees with its scenario file — one
 * service per planned peer and coordinator with the same ids, each peer's node config carrying the
 * same latency model and vote stance as the process testbed's, coordinators finding the peers by the
 * region aliases every peer carries on `wan`, and the load generator attaching to every coordinator;
 * the observability overlay turns telemetry on in exactly those nodes and Prometheus scrapes each of
 * them, with the dashboard and the collector's config copied beside it.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { composeFiles, DOCKER_DIR, emitCompose } from "../../src/testbed/compose-emit.js";
import { METRICS_PORT } from "../../src/testbed/compose-observability.js";
import { parseAttach } from "../../src/testbed/attach.js";
import { loadScenario } from "../../src/testbed/scenario-loader.js";
import { peerNodeConfig, planPeers } from "../../src/testbed/topology.js";

interface Service {
  command: string[];
  labels: Record<string, string>;
  networks: Record<string, { aliases?: string[] }> | string[];
}

describe("compose emitted from a scenario", () => {
  for (const name of ["smoke", "seed-nat-tail"]) {
    it(`${name}: services, node configs and discovery agree with the scenario`, async () => {
      const s = await loadScenario(name);
      const { files } = await composeFiles(s, `${name}.yaml`);
      const doc = parse(files.get("compose.yml")!) as { services: Record<string, Service> };
      const peers = planPeers(s);
      const expected = [...peers.map((p) => p.id), ...s.coordinators.map((c) => c.name), "loadgen"];
      expect(Object.keys(doc.services).sort()).toEqual(expected.sort());

      for (const p of peers) {
        const config = JSON.parse(files.get(`nodes/${p.id}.json`)!) as Record<string, unknown>;
        expect(config).toEqual({ ...peerNodeConfig(s, p, 7400), listen: "0.0.0.0:7400" });
        const svc = doc.services[p.id]!;
        expect(svc.command).toEqual(["node", "--config", `/etc/tailswarm/${p.id}.json`]);
        expect(svc.labels["org.tailswarm.gateway"]).toBe(p.gateway);
        const nets = svc.networks as Record<string, { aliases?: string[] }>;
        expect(Object.keys(nets).sort()).toEqual([`region-${p.region}`, "wan"].sort());
        expect(nets.wan!.aliases).toContain(`peers-${p.region}`);
      }
      for (const c of s.coordinators) {
        const config = JSON.parse(files.get(`nodes/${c.name}.json`)!) as { dns: string[]; nodeId: string };
        expect(config.nodeId).toBe(c.name);
        expect(config.dns.sort()).toEqual(s.regions.map((r) => `peers-${r.name}:7400`).sort());
      }
      const loadgen = doc.services.loadgen!.command;
      const attach = parseAttach(loadgen[loadgen.indexOf("--attach") + 1]!);
      expect([...attach.keys()].sort()).toEqual(s.coordinators.map((c) => c.name).sort());
    });
  }

  it("the generated file says where it came from", async () => {
    const s = await loadScenario("smoke");
    const { files } = await composeFiles(s, "smoke.yaml");
    expect(files.get("compose.yml")!.split("\n")[0]).toContain("GENERATED from smoke.yaml");
    expect(await readFile(s.file, "utf8")).toContain("name: smoke");
  });

  it("the observability overlay: telemetry on in every node, one scrape target per node", async () => {
    const s = await loadScenario("seed-nat-tail");
    const { files, services } = await composeFiles(s, "seed-nat-tail.yaml");
    const overlay = parse(files.get("compose.observability.yml")!) as {
      services: Record<string, { environment?: Record<string, string>; profiles?: string[]; image?: string }>;
    };
    const nodes = [...services.peers, ...services.coordinators];
    for (const id of nodes) {
      expect(overlay.services[id]!.environment).toEqual({
        OTEL_SDK_DISABLED: "false",
        TAILSWARM_METRICS_PROMETHEUS_PORT: String(METRICS_PORT),
      });
    }
    expect(overlay.services.loadgen).toBeUndefined();
    expect(overlay.services.prometheus!.profiles).toBeUndefined();
    expect(overlay.services["otel-collector"]!.profiles).toEqual(["traces"]);
    expect(overlay.services.jaeger!.profiles).toEqual(["traces"]);
    expect(overlay.services.grafana!.profiles).toEqual(["grafana"]);
    expect(overlay.services.prometheus!.image).toMatch(/^\$\{PROMETHEUS_IMAGE:-prom\/prometheus:v/);

    const prom = parse(files.get("observability/prometheus.yml")!) as {
      global: { scrape_interval: string };
      scrape_configs: {
        job_name: string;
        static_configs: { targets: string[]; labels?: Record<string, string> }[];
      }[];
    };
    const template = parse(await readFile(join(DOCKER_DIR, "prometheus.yml"), "utf8")) as typeof prom;
    expect(prom.global).toEqual(template.global);
    const job = (name: string) => prom.scrape_configs.find((j) => j.job_name === name)!;
    const targets = (name: string) => job(name).static_configs.flatMap((c) => c.targets);
    expect(targets("tailswarm-peers").sort()).toEqual(
      services.peers.map((p) => `${p}:${METRICS_PORT}`).sort(),
    );
    expect(targets("tailswarm-coordinators").sort()).toEqual(
      services.coordinators.map((c) => `${c}:${METRICS_PORT}`).sort(),
    );
    for (const p of planPeers(s)) {
      const c = job("tailswarm-peers").static_configs.find(
        (x) => x.targets[0] === `${p.id}:${METRICS_PORT}`,
      )!;
      expect(c.labels).toEqual({ node: p.id, region: p.region, ...(p.gateway && { gateway: p.gateway }) });
    }
    // The template's own jobs stay.
    for (const j of template.scrape_configs) expect(job(j.job_name)).toEqual(j);
  });

  it("emitCompose writes the overlay with the dashboard and the collector config beside it", async () => {
    const dir = await mkdtemp(join(tmpdir(), "tailswarm-emit-"));
    try {
      const written = await emitCompose(await loadScenario("smoke"), dir);
      expect(written).toContain("compose.observability.yml");
      for (const rel of [
        "otel-collector.yaml",
        "grafana/dashboards/tailswarm.json",
        "grafana/provisioning/datasources/tailswarm.yaml",
      ]) {
        expect(await readFile(join(dir, "observability", rel), "utf8")).toBe(
          await readFile(join(DOCKER_DIR, rel), "utf8"),
        );
      }
      await expect(
        emitCompose(await loadScenario("smoke"), dir, undefined, join(dir, "nowhere")),
      ).rejects.toThrow(/observability template: got ".*nowhere.*prometheus\.yml", expected a readable file/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
