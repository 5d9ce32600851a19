/**
 * deploy/kubernetes rendered by the real `kubectl kustomize` and checked without a cluster: every
 * object of every kustomization validates against the Kubernetes 1.36, cert-manager and Prometheus
 * Operator schemas (no unknown field either); a deliberately broken overlay fails with the field
 * named; and the properties the docs promise hold in every region (grace period > preStop + drain,
 * the probe on the port the node listens on, the restricted security context, the region from the
 * overlay, a node config the node itself accepts).
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { parse } from "yaml";
import { beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/node/config/load-config.js";
import { requireBackend } from "../support/backend.js";
import {
  containerEnv,
  deployDir,
  find,
  kubectlStatus,
  kustomizations,
  render,
  repo,
} from "./helpers/kustomize.js";
import type { EnvVar, KubeObject } from "./helpers/kustomize.js";
import { validateObject } from "./helpers/validate.js";
import { scratchDir } from "../support/scratch-dir.js";

const kubectl = kubectlStatus();
const have = requireBackend(
  "kubectl",
  kubectl.ok,
  `${kubectl.ok ? "" : kubectl.why}; a kubectl whose kustomize is v4+ (bash scripts/ensure-test-deps.sh)`,
);
const pkg = JSON.parse(readFileSync(join(repo, "package.json"), "utf8")) as { version: string };
/** The regions of the testbed's scenarios: the overlays are one per region, by the same names. */
const scenarioRegions = (
  parse(readFileSync(join(repo, "testbed/scenarios/seed-nat-tail.yaml"), "utf8")) as {
    regions: { name: string }[];
  }
).regions.map((r) => r.name);

const rendered = new Map<string, KubeObject[]>();
const scratch = scratchDir("k8s-manifests");
beforeAll(async () => {
  if (!have) return;
  for (const dir of kustomizations()) rendered.set(dir, await render(dir));
}, 120_000);

interface Container {
  name: string;
  image: string;
  args?: string[];
  env: EnvVar[];
  ports: { name: string; containerPort: number }[];
  readinessProbe: Record<string, unknown>;
  livenessProbe: Record<string, unknown>;
  startupProbe: Record<string, unknown>;
  lifecycle: { preStop: { sleep?: { seconds: number } } };
  resources: { requests: Record<string, string>; limits: Record<string, string> };
  securityContext: Record<string, unknown>;
  volumeMounts: { name: string; mountPath: string }[];
}
interface PodSpec {
  terminationGracePeriodSeconds: number;
  securityContext: Record<string, unknown>;
  topologySpreadConstraints: { topologyKey: string }[];
  containers: Container[];
  volumes: {
    name: string;
    configMap?: { name: string };
    csi?: { driver: string; volumeAttributes: Record<string, string> };
  }[];
}
const podOf = (objects: KubeObject[]): PodSpec =>
  (find(objects, "StatefulSet", "tailswarm") as unknown as { spec: { template: { spec: PodSpec } } }).spec
    .template.spec;

describe.skipIf(!have)(`deploy/kubernetes (${kubectl.ok ? kubectl.version : "no kubectl"})`, () => {
  it("has a base, an overlay per testbed region, the multi-region example and the CA", () => {
    expect(kustomizations()).toEqual(
      expect.arrayContaining([
        "base",
        "ca",
        ...scenarioRegions.map((r) => `overlays/${r}`),
        ...scenarioRegions.map((r) => `examples/multi-region/${r}`),
      ]),
    );
  });

  it("every rendered object of every kustomization validates against its schema", () => {
    const problems: string[] = [];
    let count = 0;
    for (const [dir, objects] of rendered) {
      for (const o of objects) {
        count++;
        problems.push(...validateObject(o).map((p) => `${dir}: ${p}`));
      }
    }
    expect(problems).toEqual([]);
    expect(count).toBeGreaterThan(50);
    const kinds = new Set([...rendered.values()].flat().map((o) => o.kind));
    for (const k of [
      "StatefulSet",
      "Service",
      "ConfigMap",
      "PodDisruptionBudget",
      "NetworkPolicy",
      "Certificate",
      "ClusterIssuer",
      "PodMonitor",
      "ServiceExport",
    ]) {
      expect(kinds).toContain(k);
    }
  });

  it("a deliberately broken overlay fails validation with the field named", async () => {
    const dir = mkdtempSync(join(scratch(), "broken-"));
    writeFileSync(
      join(dir, "kustomization.yaml"),
      [
        "resources:",
        `  - ${relative(dir, join(deployDir, "overlays", scenarioRegions[0]!))}`, // kustomize refuses absolute paths
        "patches:",
        "  - patch: |-",
        "      apiVersion: apps/v1",
        "      kind: StatefulSet",
        "      metadata: { name: tailswarm }",
        "      spec:",
        "        replicas: three",
        "        template:",
        "          spec:",
        "            containers:",
        "              - name: node",
        "                securityContxt: { runAsUser: 0 }",
        "",
      ].join("\n"),
    );
    const objects = await render(dir);
    const sts = find(objects, "StatefulSet");
    expect(validateObject(sts)).toEqual(["StatefulSet/tailswarm spec.replicas: must be integer"]);
    (sts.spec as { replicas: unknown }).replicas = 3;
    expect(validateObject(sts)).toEqual([
      "StatefulSet/tailswarm spec.template.spec.containers[0].securityContxt: unknown field",
    ]);
    const cert = structuredClone(find(rendered.get("ca")!, "Certificate"));
    (cert.spec as Record<string, unknown>).duration = 8760;
    expect(validateObject(cert)).toEqual(["Certificate/tailswarm-ca spec.duration: must be string"]);
    expect(validateObject({ apiVersion: "example.com/v1", kind: "Widget", metadata: { name: "w" } })).toEqual(
      ["Widget/w: no schema for example.com/v1/Widget in the validator"],
    );
  });

  describe.each(scenarioRegions)("region %s", (region) => {
    for (const variant of [`overlays/${region}`, `examples/multi-region/${region}`]) {
      it(`${variant}: namespace, region, image and the node config the node accepts`, async () => {
        const objects = rendered.get(variant)!;
        for (const o of objects) {
          if (o.kind === "Namespace" || o.kind === "ClusterIssuer") continue;
          expect(o.metadata.namespace, `${o.kind}/${o.metadata.name}`).toBe(`tailswarm-${region}`);
        }
        const pod = podOf(objects);
        const [c] = pod.containers;
        expect(c!.image).toBe(`tailswarm:${pkg.version}`);
        const env = containerEnv(c!.env, {
          "metadata.name": "tailswarm-0",
          "metadata.namespace": `tailswarm-${region}`,
          "spec.nodeName": "worker-1",
        });
        expect(env.TAILSWARM_REGION).toBe(region);
        expect(env.TAILSWARM_NODE_ID).toBe(`tailswarm-0.tailswarm-${region}`);
        expect(env.OTEL_RESOURCE_ATTRIBUTES).toContain(`cloud.region=${region}`);
        expect(env.OTEL_EXPORTER_OTLP_ENDPOINT).toMatch(/^http:\/\/otel-collector\./);

        // The ConfigMap's node.yaml with the container's environment is a config the node loads.
        const configVolume = pod.volumes.find((v) => v.configMap !== undefined)!;
        const cm = find(objects, "ConfigMap", configVolume.configMap!.name) as unknown as {
          data: Record<string, string>;
        };
        const tmp = mkdtempSync(join(scratch(), "config-"));
        writeFileSync(join(tmp, "node.yaml"), cm.data["node.yaml"]!);
        const mount = c!.volumeMounts.find((m) => m.name === configVolume.name)!;
        expect(c!.args).toEqual(["node", "--config", `${mount.mountPath}/node.yaml`]);
        // The tls.* files are mounted at run time (components/tls): stand-ins at the same names.
        const nodeEnv = { ...env };
        for (const k of ["TAILSWARM_TLS_CA", "TAILSWARM_TLS_CERT", "TAILSWARM_TLS_KEY"]) {
          if (env[k] === undefined) continue;
          nodeEnv[k] = join(tmp, k);
          writeFileSync(nodeEnv[k], "-----BEGIN CERTIFICATE-----\n");
        }
        const { config, warnings } = await loadConfig({
          argv: ["--config", join(tmp, "node.yaml")],
          env: nodeEnv,
        });
        expect(warnings).toEqual([]);
        expect(config.region).toBe(region);
        expect(config.nodeId).toBe(`tailswarm-0.tailswarm-${region}`);

        // Probes ask the port the node listens on; grace > preStop + drain.
        const grpcPort = c!.ports.find((p) => p.name === "grpc")!.containerPort;
        expect(config.listen).toBe(`0.0.0.0:${grpcPort}`);
        expect(config.metrics.prometheusPort).toBe(c!.ports.find((p) => p.name === "metrics")!.containerPort);
        for (const probe of [c!.readinessProbe, c!.livenessProbe, c!.startupProbe]) {
          const grpc = probe.grpc as { port: number } | undefined;
          const exec = probe.exec as { command: string[] } | undefined;
          if (grpc !== undefined) expect(grpc.port).toBe(grpcPort);
          else expect(exec!.command).toEqual(["node", "docker/healthcheck.mjs", `127.0.0.1:${grpcPort}`]);
        }
        const preStopMs = (c!.lifecycle.preStop.sleep?.seconds ?? 0) * 1000;
        expect(preStopMs).toBeGreaterThan(0);
        expect(pod.terminationGracePeriodSeconds * 1000).toBeGreaterThan(
          preStopMs + config.drainGraceMs + 1000,
        );

        // The restricted security profile, sized resources, spread over zones.
        expect(pod.securityContext).toMatchObject({
          runAsNonRoot: true,
          seccompProfile: { type: "RuntimeDefault" },
        });
        expect(c!.securityContext).toMatchObject({
          allowPrivilegeEscalation: false,
          readOnlyRootFilesystem: true,
          capabilities: { drop: ["ALL"] },
        });
        for (const r of ["cpu", "memory"]) {
          expect(c!.resources.requests[r], r).toBeDefined();
          expect(c!.resources.limits[r], r).toBeDefined();
        }
        expect(pod.topologySpreadConstraints.map((t) => t.topologyKey)).toContain(
          "topology.kubernetes.io/zone",
        );

        // Peers: a headless Service that publishes only ready pods, named in the node's dns.
        const peers = find(objects, "Service", "tailswarm-peers") as unknown as {
          spec: Record<string, unknown>;
        };
        expect(peers.spec).toMatchObject({ clusterIP: "None", publishNotReadyAddresses: false });
        expect(config.dns[0]).toBe(`tailswarm-peers:${grpcPort}`);
        const pdb = find(objects, "PodDisruptionBudget") as unknown as { spec: { maxUnavailable: number } };
        expect(pdb.spec.maxUnavailable).toBe(1);

        if (variant.startsWith("examples/")) {
          // The other regions through clusterset.local; the certificate where tls.* points.
          expect(config.dns.slice(1)).toEqual(
            scenarioRegions
              .filter((r) => r !== region)
              .map((r) => `tailswarm-peers.tailswarm-${r}.svc.clusterset.local:${grpcPort}`),
          );
          const tls = pod.volumes.find((v) => v.csi?.driver === "csi.cert-manager.io")!;
          const tlsMount = c!.volumeMounts.find((m) => m.name === tls.name)!.mountPath;
          expect([env.TAILSWARM_TLS_CA, env.TAILSWARM_TLS_CERT, env.TAILSWARM_TLS_KEY]).toEqual(
            ["ca.crt", "tls.crt", "tls.key"].map((f) => `${tlsMount}/${f}`),
          );
          expect(tls.csi!.volumeAttributes["csi.cert-manager.io/dns-names"]!.split(",")).toContain(
            env.TAILSWARM_TLS_SERVER_NAME,
          );
          expect(tls.csi!.volumeAttributes["csi.cert-manager.io/fs-group"]).toBe(
            String(pod.securityContext.runAsGroup),
          );
          expect(find(objects, "ServiceExport").metadata.name).toBe("tailswarm-peers");
        }
      });
    }
  });
});
