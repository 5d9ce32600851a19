/**
 * The rendered pod spec runs: the StatefulSets of two regions of deploy/kubernetes/examples/
 * multi-region, rendered by `kubectl kustomize`, run under Docker as the kubelet would run them —
 * the image, args and environment (downward-API fields and `$(VAR)` resolved), the ConfigMap's
 * node.yaml at its mount path, the csi-driver's certificate files (made by openssl from the volume's
 * attributes, with the pod's name and namespace put in), the security context (user, read-only root,
 * no capabilities, no privilege escalation), the memory and CPU limits, the emptyDir as a tmpfs.
 * Names resolve as the clusters' DNS would: on each region's network `tailswarm-peers` is that
 * region's pods, and on the shared network each region's `…svc.clusterset.local` name is its pods.
 *
 * Checked: the probe the manifest names passes (its exec command in the container; the native gRPC
 * probe of the plain overlay through a grpc.health.v1 call), the swarm forms across both regions, a
 * Coordinate fans out to both, and SIGTERM after the preStop pause drains within the grace period.
 * Two pods per region (the manifests say three) to fit a 2-core machine. Skipped unless
 * TAILSWARM_DOCKER_TESTS=1; leaves no container or network behind (all named tailswarm-k8s-*).
 */
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmodSync, copyFileSync, mkdirSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { protoPath as healthProtoPath } from "grpc-health-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NodeClient } from "../../src/node/client.js";
import { requireBackend } from "../support/backend.js";
import { opensslCerts } from "../support/openssl-certs.js";
import { containerEnv, find, kubectlStatus, render, repo } from "../kubernetes/helpers/kustomize.js";
import type { EnvVar, KubeObject } from "../kubernetes/helpers/kustomize.js";
import { scratchDir } from "../support/scratch-dir.js";

const run = promisify(execFile);
const enabled = process.env.TAILSWARM_DOCKER_TESTS === "1";
const kubectl = kubectlStatus();
const haveKubectl = !enabled || requireBackend("kubectl", kubectl.ok, kubectl.ok ? "" : kubectl.why);
const prefix = `tailswarm-k8s-${randomBytes(3).toString("hex")}`;
const REGIONS = ["us-east", "eu-west"] as const;
const PODS_PER_REGION = 2;
const dir = scratchDir("k8s-pods");

async function docker(...args: string[]): Promise<string> {
  const { stdout } = await run("docker", args, { maxBuffer: 64 << 20 });
  return stdout.trim();
}

interface Probe {
  exec?: { command: string[] };
  grpc?: { port: number; service?: string };
  periodSeconds?: number;
  timeoutSeconds?: number;
}
interface ContainerSpec {
  name: string;
  image: string;
  command?: string[];
  args?: string[];
  env: EnvVar[];
  readinessProbe: Probe;
  lifecycle?: { preStop?: { sleep?: { seconds: number } } };
  resources?: { limits?: { cpu?: string; memory?: string } };
  securityContext?: {
    readOnlyRootFilesystem?: boolean;
    allowPrivilegeEscalation?: boolean;
    capabilities?: { drop?: string[] };
  };
  volumeMounts: { name: string; mountPath: string }[];
}
interface PodTemplate {
  terminationGracePeriodSeconds: number;
  securityContext: { runAsUser: number; runAsGroup: number };
  containers: ContainerSpec[];
  volumes: {
    name: string;
    configMap?: { name: string };
    emptyDir?: { sizeLimit?: string };
    csi?: { driver: string; volumeAttributes: Record<string, string> };
  }[];
}

interface Pod {
  readonly region: string;
  readonly namespace: string;
  readonly name: string;
  readonly container: string;
  readonly spec: PodTemplate;
  ip: string;
}

const certs = opensslCerts(dir);
/** Replaces the csi-driver's `${POD_NAME}` and `${POD_NAMESPACE}` as it does. */
const expandPodVars = (s: string, pod: { name: string; namespace: string }): string =>
  s.replace(/\$\{POD_NAME\}/g, pod.name).replace(/\$\{POD_NAMESPACE\}/g, pod.namespace);

/** Issues a certificate signed by the test's swarm CA, with the SANs the csi volume asks for. */
function issue(
  out: string,
  attrs: Readonly<Record<string, string>>,
  pod: { name: string; namespace: string },
): void {
  mkdirSync(out, { recursive: true, mode: 0o755 });
  const dns = (attrs["csi.cert-manager.io/dns-names"] ?? "").split(",").filter(Boolean);
  const uris = (attrs["csi.cert-manager.io/uri-sans"] ?? "").split(",").filter(Boolean);
  const san = [
    ...dns.map((d) => `DNS:${expandPodVars(d, pod)}`),
    ...uris.map((u) => `URI:${expandPodVars(u, pod)}`),
  ];
  const cn = expandPodVars(attrs["csi.cert-manager.io/common-name"] ?? pod.name, pod);
  const extensions = "extendedKeyUsage=serverAuth,clientAuth\n";
  certs.cert(join(out, "tls"), { ca: "ca", san: san.join(","), cn, extensions });
  renameSync(join(out, "tls.pem"), join(out, "tls.crt"));
  copyFileSync(join(dir(), "ca.pem"), join(out, "ca.crt"));
  for (const f of ["tls.key", "tls.crt", "ca.crt"]) chmodSync(join(out, f), 0o644); // fs-group stands in as world-readable
}

/** `docker run` flags for what the kubelet would set up for this pod's container. */
function runFlags(pod: Pod, objects: KubeObject[]): string[] {
  const { spec } = pod;
  const c = spec.containers[0]!;
  const flags = [
    "--name",
    pod.container,
    "--hostname",
    pod.name,
    "--label",
    "tailswarm.test=1",
    "--no-healthcheck",
  ];
  const env = containerEnv(c.env, {
    "metadata.name": pod.name,
    "metadata.namespace": pod.namespace,
    "spec.nodeName": "docker",
  });
  for (const [k, v] of Object.entries(env)) flags.push("-e", `${k}=${v}`);
  for (const m of c.volumeMounts) {
    const v = spec.volumes.find((x) => x.name === m.name)!;
    if (v.configMap !== undefined) {
      const cm = find(objects, "ConfigMap", v.configMap.name) as unknown as { data: Record<string, string> };
      const host = join(dir(), pod.container, v.name);
      mkdirSync(host, { recursive: true, mode: 0o755 });
      for (const [file, text] of Object.entries(cm.data))
        writeFileSync(join(host, file), text, { mode: 0o644 });
      flags.push("-v", `${host}:${m.mountPath}:ro`);
    } else if (v.csi?.driver === "csi.cert-manager.io") {
      const host = join(dir(), pod.container, v.name);
      issue(host, v.csi.volumeAttributes, pod);
      flags.push("-v", `${host}:${m.mountPath}:ro`);
    } else if (v.emptyDir !== undefined) {
      const size = (v.emptyDir.sizeLimit ?? "64Mi").replace(/Mi$/, "m");
      flags.push("--tmpfs", `${m.mountPath}:size=${size},uid=${spec.securityContext.runAsUser}`);
    } else {
      throw new Error(`volume ${v.name}: no stand-in for it in this test`);
    }
  }
  flags.push("--user", `${spec.securityContext.runAsUser}:${spec.securityContext.runAsGroup}`);
  if (c.securityContext?.readOnlyRootFilesystem === true) flags.push("--read-only");
  if (c.securityContext?.allowPrivilegeEscalation === false)
    flags.push("--security-opt", "no-new-privileges");
  if (c.securityContext?.capabilities?.drop?.includes("ALL") === true) flags.push("--cap-drop", "ALL");
  const limits = c.resources?.limits;
  if (limits?.memory !== undefined)
    flags.push("--memory", limits.memory.replace(/Mi$/, "m").replace(/Gi$/, "g"));
  if (limits?.cpu !== undefined)
    flags.push(
      "--cpus",
      limits.cpu.endsWith("m") ? String(Number(limits.cpu.slice(0, -1)) / 1000) : limits.cpu,
    );
  if (c.command !== undefined) flags.push("--entrypoint", c.command[0]!);
  flags.push(c.image, ...(c.command?.slice(1) ?? []), ...(c.args ?? []));
  return flags;
}

const healthDef = protoLoader.loadSync(healthProtoPath, { keepCase: true, enums: String });
const Health = grpc.loadPackageDefinition(healthDef).grpc as unknown as {
  health: { v1: { Health: grpc.ServiceClientConstructor } };
};

/** The readiness probe as the kubelet runs it: the exec command in the container, or a gRPC health check. */
async function probe(pod: Pod): Promise<string> {
  const p = pod.spec.containers[0]!.readinessProbe;
  if (p.exec !== undefined) {
    try {
      return await docker("exec", pod.container, ...p.exec.command);
    } catch (err) {
      return `failed: ${(err as { stderr?: string }).stderr ?? (err as Error).message}`;
    }
  }
  const client = new Health.health.v1.Health(
    `${pod.ip}:${p.grpc!.port}`,
    grpc.credentials.createInsecure(),
  ) as unknown as {
    Check: (
      req: object,
      opts: grpc.CallOptions,
      cb: (err: grpc.ServiceError | null, reply?: { status: string }) => void,
    ) => void;
    close(): void;
  };
  try {
    return await new Promise<string>((resolve) =>
      client.Check(
        { service: p.grpc!.service ?? "" },
        { deadline: Date.now() + (p.timeoutSeconds ?? 1) * 1000 },
        (err: grpc.ServiceError | null, reply?: { status: string }) =>
          resolve(err ? `failed: ${err.message}` : reply!.status),
      ),
    );
  } finally {
    client.close();
  }
}

async function untilReady(pod: Pod, timeoutMs = 90_000): Promise<string> {
  let last = "";
  for (const end = Date.now() + timeoutMs; Date.now() < end; await new Promise((r) => setTimeout(r, 1000))) {
    last = await probe(pod);
    if (/SERVING$/.test(last) && !/NOT_SERVING/.test(last)) return last;
  }
  return last;
}

const wan = `${prefix}-wan`;
const networks = [wan, ...REGIONS.map((r) => `${prefix}-${r}`), `${prefix}-plain`];
const pods: Pod[] = [];
let plain: Pod | undefined;
let image = "";
const clientTls = (): { ca: string; cert: string; key: string } => ({
  ca: join(dir(), "ca.pem"),
  cert: join(dir(), "client", "tls.crt"),
  key: join(dir(), "client", "tls.key"),
});

describe.skipIf(!enabled || !haveKubectl)("the rendered pod spec under Docker", () => {
  beforeAll(async () => {
    chmodSync(dir(), 0o755); // the containers read it as another user
    const rendered = Object.fromEntries(
      await Promise.all(REGIONS.map(async (r) => [r, await render(`examples/multi-region/${r}`)] as const)),
    ) as Record<(typeof REGIONS)[number], KubeObject[]>;
    const plainObjects = await render(`overlays/${REGIONS[0]}`);
    const template = (objects: KubeObject[]): PodTemplate =>
      (find(objects, "StatefulSet", "tailswarm") as unknown as { spec: { template: { spec: PodTemplate } } })
        .spec.template.spec;
    image = template(rendered[REGIONS[0]]).containers[0]!.image;
    if (process.env.TAILSWARM_SKIP_IMAGE_BUILD === "1" && process.env.TAILSWARM_IMAGE !== undefined) {
      await docker("tag", process.env.TAILSWARM_IMAGE, image);
    } else {
      await run("bash", [`${repo}/docker/build-image.sh`], {
        env: { ...process.env, TAILSWARM_IMAGE: image },
        maxBuffer: 64 << 20,
      });
    }
    certs.ca("ca", "tailswarm-ca");
    chmodSync(join(dir(), "ca.pem"), 0o644);
    issue(
      join(dir(), "client"),
      { "csi.cert-manager.io/dns-names": "client.tailswarm.internal" },
      { name: "client", namespace: "test" },
    );

    for (const n of networks) await docker("network", "create", "--label", "tailswarm.test=1", n);
    for (const region of REGIONS) {
      const objects = rendered[region];
      const namespace = find(objects, "StatefulSet", "tailswarm").metadata.namespace!;
      const clusterset = `tailswarm-peers.${namespace}.svc.clusterset.local`;
      for (let i = 0; i < PODS_PER_REGION; i++) {
        const pod: Pod = {
          region,
          namespace,
          name: `tailswarm-${i}`,
          container: `${prefix}-${region}-${i}`,
          spec: template(objects),
          ip: "",
        };
        await docker(
          "create",
          "--network",
          `${prefix}-${region}`,
          "--network-alias",
          "tailswarm-peers",
          "--network-alias",
          `${pod.name}.tailswarm-peers`,
          ...runFlags(pod, objects),
        );
        await docker("network", "connect", "--alias", clusterset, wan, pod.container);
        pods.push(pod);
      }
    }
    const p: Pod = {
      region: REGIONS[0],
      namespace: find(plainObjects, "StatefulSet", "tailswarm").metadata.namespace!,
      name: "tailswarm-0",
      container: `${prefix}-plain-0`,
      spec: template(plainObjects),
      ip: "",
    };
    await docker(
      "create",
      "--network",
      `${prefix}-plain`,
      "--network-alias",
      "tailswarm-peers",
      ...runFlags(p, plainObjects),
    );
    plain = p;
    for (const pod of [...pods, plain]) {
      await docker("start", pod.container);
      const net = pod === plain ? `${prefix}-plain` : wan;
      pod.ip = await docker(
        "inspect",
        "-f",
        `{{(index .NetworkSettings.Networks "${net}").IPAddress}}`,
        pod.container,
      );
    }
  }, 900_000);

  afterAll(async () => {
    const names = [...pods, ...(plain === undefined ? [] : [plain])].map((p) => p.container);
    if (names.length > 0) await docker("rm", "-f", "-v", ...names).catch(() => "");
    for (const n of networks) await docker("network", "rm", n).catch(() => "");
    expect(await docker("ps", "-aq", "--filter", `name=${prefix}`)).toBe("");
    expect(await docker("network", "ls", "-q", "--filter", `name=${prefix}`)).toBe("");
  }, 120_000);

  it("the readiness probe the manifest names passes: exec under TLS, native gRPC without", async () => {
    for (const pod of pods) {
      expect(pod.spec.containers[0]!.readinessProbe.exec, pod.container).toBeDefined();
      expect(await untilReady(pod), pod.container).toMatch(/: SERVING$/);
    }
    expect(plain!.spec.containers[0]!.readinessProbe.grpc).toBeDefined();
    expect(await untilReady(plain!)).toBe("SERVING");
  }, 240_000);

  it("forms one swarm across both regions and fans a Coordinate out to both", async () => {
    const [first] = pods;
    const serverName = first!.spec.containers[0]!.env.find(
      (e) => e.name === "TAILSWARM_TLS_SERVER_NAME",
    )!.value!;
    const client = new NodeClient(`${first!.ip}:7400`, { ...clientTls(), serverName });
    try {
      const others = pods.length - 1;
      let up: { peerId: string; region: string }[] = [];
      for (const end = Date.now() + 60_000; Date.now() < end; await new Promise((r) => setTimeout(r, 500))) {
        up = (await client.status()).peers.filter((p) => p.up);
        if (up.length === others) break;
      }
      expect(up.map((p) => [p.peerId, p.region]).sort()).toEqual(
        pods
          .filter((p) => p !== first)
          .map((p) => [`${p.name}.${p.namespace}`, p.region])
          .sort(),
      );
      const r = await client.coordinate({ kind: "echo", payload: { vote: "yes" } }, 5_000);
      expect(r.committed).toBe(others);
      expect(r.action).toBe("yes");
      // The operator's view from inside the pod (docs/kubernetes.md), with the pod's own certificate.
      const tls = "/etc/tailswarm/tls";
      const status = await docker(
        ...["exec", first!.container, "node", "dist/cli/main.js", "status", "127.0.0.1:7400", "--json"],
        ...["--tls-ca", `${tls}/ca.crt`, "--tls-cert", `${tls}/tls.crt`, "--tls-key", `${tls}/tls.key`],
        ...["--tls-server-name", serverName],
      );
      expect((JSON.parse(status) as { peers: unknown[] }).peers).toHaveLength(others);
    } finally {
      client.close();
    }
  }, 120_000);

  it("serves metrics on the port the manifest names, with the region on the resource", async () => {
    for (const pod of pods) {
      const c = pod.spec.containers[0] as ContainerSpec & {
        ports: { name: string; containerPort: number }[];
      };
      const port = c.ports.find((p) => p.name === "metrics")!.containerPort;
      const text = await (await fetch(`http://${pod.ip}:${port}/metrics`)).text();
      expect(text).toContain(`cloud_region="${pod.region}"`);
      expect(text).toContain(`k8s_pod_name="${pod.name}"`);
    }
  }, 60_000);

  it("SIGTERM after the preStop pause drains cleanly within the manifest's grace period", async () => {
    const pod = pods.at(-1)!;
    const c = pod.spec.containers[0]!;
    const preStopS = c.lifecycle?.preStop?.sleep?.seconds ?? 0;
    const graceS = pod.spec.terminationGracePeriodSeconds;
    const started = Date.now();
    await new Promise((r) => setTimeout(r, preStopS * 1000)); // the kubelet runs preStop, then signals
    await docker("stop", "-t", String(graceS - preStopS), pod.container);
    const elapsedS = (Date.now() - started) / 1000;
    expect(elapsedS).toBeLessThan(graceS);
    expect(await docker("inspect", "-f", "{{.State.ExitCode}}", pod.container)).toBe("0");
    const { stderr } = await run("docker", ["logs", pod.container]);
    const stopped = stderr
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l) as { msg: string; drained?: boolean })
      .find((l) => l.msg === "stopped");
    expect(stopped).toMatchObject({ drained: true });
  }, 120_000);
});
