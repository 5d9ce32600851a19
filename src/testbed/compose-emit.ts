/**
 * The containerised swarm of a scenario, generated from the scenario file so that the scenario stays the
 * one source of truth (`tailswarm testbed --scenario NAME --emit-compose DIR`): `DIR/compose.yml` (one
 * service per peer and coordinator with `planPeers`' ids, models and keys, a network per region plus the
 * shared `wan`, and the `--profile run` load generator), `DIR/nodes/<id>.json` (each node's config), the
 * scenario file for the load generator, and the observability overlay (compose-observability.ts).
 *
 * Discovery is by service DNS: on `wan` every peer carries the aliases `peers` and `peers-<region>`, and
 * docker's DNS answers one A record per running container of an alias, which the coordinators resolve
 * (`dns:` in their config).
 */
import { cp, mkdir, readFile, writeFile } from "node:fs/promises";
import { basename, dirname, extname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { stringify } from "yaml";
import type { TailswarmError } from "../errors.js";
import { invalid } from "../errors.js";
import {
  OBSERVABILITY_COPIES,
  OVERLAY_HEADER,
  PROMETHEUS_TEMPLATE,
  observabilityOverlay,
  prometheusConfig,
} from "./compose-observability.js";
import type { ObservedNode } from "./compose-observability.js";
import type { Scenario } from "./scenario-types.js";
import { coordinatorNodeConfig, peerNodeConfig, planPeers } from "./topology.js";

/** The gRPC port of every node inside its container. */
export const CONTAINER_PORT = 7400;
/** Where the generated node configs are mounted in each container. */
export const CONFIG_MOUNT = "/etc/tailswarm";
/** Where the load generator writes its report inside its container (docker cp copies it out). */
export const LOADGEN_OUT = "/tmp/tailswarm-out";
/** docker/ of this package (checkout or image): the observability overlay's templates. */
export const DOCKER_DIR = fileURLToPath(new URL("../../docker/", import.meta.url));

export interface ComposeFiles {
  /** Relative path (under DIR) to content. */
  readonly files: ReadonlyMap<string, string>;
  readonly services: { readonly peers: readonly string[]; readonly coordinators: readonly string[] };
}

const HEADER = (s: Scenario, scenarioFile: string): string =>
  [
    `# GENERATED from ${scenarioFile} by`,
    `#   tailswarm testbed --scenario ${scenarioFile} --emit-compose DIR`,
    "# Do not edit: change the scenario; docker/testbed.sh generates this again on every run",
    "# (test/testbed/compose-emit.test.ts checks that it agrees with the scenario).",
    "#",
    `# ${s.description.replace(/\s+/g, " ").trim()}`,
    "# Regions are networks (region-<name>) plus the shared `wan`; peers are found by service DNS",
    "# (`peers-<region>` aliases on `wan`, one A record per running container). Inter-region latency is",
    "# each peer's synthetic latency model (no netem). Telemetry is off: compose.observability.yml beside",
    "# this file turns it on and adds Prometheus, the OTel Collector and Grafana.",
    "",
  ].join("\n");

/** Environment shared by every node; `${VAR:-default}` is compose's interpolation from the caller's shell. */
function nodeEnv(service: string, region: string, gateway?: string): Record<string, string> {
  return {
    OTEL_SDK_DISABLED: "${OTEL_SDK_DISABLED:-true}",
    OTEL_SERVICE_NAME: service,
    OTEL_RESOURCE_ATTRIBUTES: `cloud.region=${region}${gateway !== undefined ? `,tailswarm.gateway=${gateway}` : ""}`,
    OTEL_EXPORTER_OTLP_ENDPOINT: "${OTEL_EXPORTER_OTLP_ENDPOINT:-http://otel-collector:4318}",
    OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuf",
    OTEL_TRACES_EXPORTER: "${OTEL_TRACES_EXPORTER:-otlp}",
    OTEL_METRICS_EXPORTER: "none",
  };
}

const NODE_BASE = {
  image: "${TAILSWARM_IMAGE:-tailswarm:dev}",
  volumes: [`./nodes:${CONFIG_MOUNT}:ro`],
  // A little more than the scenario's drainGraceMs so SIGTERM draining completes.
  stop_grace_period: "8s",
  // The image's gRPC health check, rarely: each check is a fresh Node process (~0.2 s CPU) and every
  // container shares the same cores. docker/testbed.sh asks the nodes directly instead.
  healthcheck: { interval: "30s", timeout: "10s", start_period: "20s", retries: 3 },
};

function templateError(path: string, err: unknown): TailswarmError {
  return invalid(
    "observability template",
    path,
    `a readable file in docker/ of a tailswarm checkout or image (${(err as Error).message})`,
    { code: "INVALID_CONFIG", cause: err },
  );
}

async function template(dir: string, rel: string): Promise<string> {
  return readFile(join(dir, rel), "utf8").catch((err: unknown) => {
    throw templateError(join(dir, rel), err);
  });
}

/**
 * The generated files, by path under DIR. `templatesDir` is where docker/prometheus.yml is read
 * (default: this package's docker/).
 */
export async function composeFiles(
  s: Scenario,
  scenarioName: string,
  templatesDir: string = DOCKER_DIR,
): Promise<ComposeFiles> {
  const peers = planPeers(s);
  const files = new Map<string, string>();
  const regionNet = (r: string): string => `region-${r}`;
  const dns = s.regions.map((r) => `peers-${r.name}:${CONTAINER_PORT}`);
  const services: Record<string, unknown> = {};
  const coordinatorRegion = s.regions[0]?.name ?? "default";

  for (const p of peers) {
    const config = {
      ...peerNodeConfig(s, p, CONTAINER_PORT),
      listen: `0.0.0.0:${CONTAINER_PORT}`,
    };
    files.set(`nodes/${p.id}.json`, `${JSON.stringify(config, null, 2)}\n`);
    services[p.id] = {
      ...NODE_BASE,
      hostname: p.id,
      command: ["node", "--config", `${CONFIG_MOUNT}/${p.id}.json`],
      environment: nodeEnv(`tailswarm-peer`, p.region, p.gateway),
      labels: {
        "org.tailswarm.testbed": "docker",
        "org.tailswarm.role": "peer",
        "org.tailswarm.region": p.region,
        ...(p.gateway !== undefined && { "org.tailswarm.gateway": p.gateway }),
      },
      networks: {
        [regionNet(p.region)]: {},
        wan: { aliases: ["peers", `peers-${p.region}`] },
      },
    };
  }
  for (const c of s.coordinators) {
    const config = {
      ...coordinatorNodeConfig(s, c.name, CONTAINER_PORT, []),
      listen: `0.0.0.0:${CONTAINER_PORT}`,
      dns,
      dnsIntervalMs: 2_000,
    };
    files.set(`nodes/${c.name}.json`, `${JSON.stringify(config, null, 2)}\n`);
    services[c.name] = {
      ...NODE_BASE,
      hostname: c.name,
      command: ["node", "--config", `${CONFIG_MOUNT}/${c.name}.json`],
      environment: nodeEnv("tailswarm-coordinator", coordinatorRegion),
      labels: {
        "org.tailswarm.testbed": "docker",
        "org.tailswarm.role": "coordinator",
        "org.tailswarm.region": coordinatorRegion,
        "org.tailswarm.budget-ms": String(c.budgetMs),
      },
      networks: { [regionNet(coordinatorRegion)]: {}, wan: { aliases: ["coordinators"] } },
    };
  }
  const ext = extname(scenarioName) !== "" ? extname(scenarioName) : ".yaml";
  const scenarioCopy = `scenario${ext}`;
  services.loadgen = {
    image: NODE_BASE.image,
    volumes: NODE_BASE.volumes,
    profiles: ["run"],
    command: [
      "testbed",
      "--scenario",
      `${CONFIG_MOUNT}/${scenarioCopy}`,
      "--attach",
      s.coordinators.map((c) => `${c.name}=${c.name}:${CONTAINER_PORT}`).join(","),
      "--attach-peers",
      `{id}:${CONTAINER_PORT}`,
      "--duration",
      `\${SWARM_DURATION_S:-${s.durationS}}`,
      "--out",
      LOADGEN_OUT,
    ],
    environment: { OTEL_SDK_DISABLED: "true" },
    labels: { "org.tailswarm.testbed": "docker", "org.tailswarm.role": "loadgen" },
    healthcheck: { disable: true },
    networks: ["wan"],
  };

  const networks: Record<string, unknown> = {};
  for (const r of s.regions) networks[regionNet(r.name)] = { labels: { "org.tailswarm.region": r.name } };
  networks.wan = { labels: { "org.tailswarm.region": "inter-region" } };

  const doc = { services, networks };
  const yaml = (d: unknown): string => stringify(d, { lineWidth: 0, aliasDuplicateObjects: false });
  files.set("compose.yml", HEADER(s, scenarioName) + yaml(doc));

  const observed: ObservedNode[] = [
    ...peers.map((p) => ({
      id: p.id,
      role: "peer" as const,
      region: p.region,
      ...(p.gateway !== undefined && { gateway: p.gateway }),
    })),
    ...s.coordinators.map((c) => ({ id: c.name, role: "coordinator" as const, region: coordinatorRegion })),
  ];
  files.set("compose.observability.yml", OVERLAY_HEADER(scenarioName) + yaml(observabilityOverlay(observed)));
  files.set(
    "observability/prometheus.yml",
    `# GENERATED from docker/${PROMETHEUS_TEMPLATE} and ${scenarioName}: one target per node.\n` +
      prometheusConfig(await template(templatesDir, PROMETHEUS_TEMPLATE), observed),
  );
  return {
    files,
    services: { peers: peers.map((p) => p.id), coordinators: s.coordinators.map((c) => c.name) },
  };
}

/**
 * Writes the compose file, the node configs, a copy of the scenario file and the observability
 * overlay (with docker/otel-collector.yaml and docker/grafana/ copied from `templatesDir`) into `dir`.
 */
export async function emitCompose(
  s: Scenario,
  dir: string,
  scenarioName?: string,
  templatesDir: string = DOCKER_DIR,
): Promise<string[]> {
  const name = scenarioName ?? (s.file !== "" ? basename(s.file) : `${s.name}.yaml`);
  const { files } = await composeFiles(s, name, templatesDir);
  await mkdir(join(dir, "nodes"), { recursive: true });
  const written: string[] = [];
  for (const [rel, text] of files) {
    await mkdir(dirname(join(dir, rel)), { recursive: true });
    await writeFile(join(dir, rel), text);
    written.push(rel);
  }
  for (const rel of OBSERVABILITY_COPIES) {
    await cp(join(templatesDir, rel), join(dir, "observability", rel), {
      recursive: true,
      errorOnExist: false,
    }).catch((err: unknown) => {
      throw templateError(join(templatesDir, rel), err);
    });
    written.push(`observability/${rel}`);
  }
  if (s.file !== "") {
    const ext = extname(name) !== "" ? extname(name) : ".yaml";
    await writeFile(join(dir, "nodes", `scenario${ext}`), await readFile(s.file));
    written.push(`nodes/scenario${ext}`);
  }
  return written;
}
