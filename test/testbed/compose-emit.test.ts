/**
 * `tailswarm testbed --emit-compose`: the containerised swarm agrees with its scenario file — one
 * service per planned peer and coordinator with the same ids, each peer's node config carrying the
 * same latency model and vote stance as the process testbed's, coordinators finding the peers by the
 * region aliases every peer carries on `wan`, and the load generator attaching to every coordinator.
 */
import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { composeFiles } from "../../src/testbed/compose-emit.js";
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
});
