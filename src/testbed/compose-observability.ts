/**
 * The observability overlay of a generated swarm (`DIR/compose.observability.yml` beside the
 * `--emit-compose` output): telemetry on in every node (`OTEL_SDK_DISABLED=false`, a Prometheus port),
 * `prometheus` scraping every generated node by service name (labelled with node, region and gateway),
 * and, under compose profiles, `otel-collector` + `jaeger` (`traces`) and `grafana` (`grafana`).
 * Prometheus has no profile: with no image registry it is the one that can be had (Debian's package,
 * docker/observability-images.sh). The files copied rather than generated are OBSERVABILITY_COPIES.
 */
import { parse, stringify } from "yaml";
import { invalid } from "../errors.js";

/** Every node's Prometheus port inside its container (metrics.prometheusPort). */
export const METRICS_PORT = 9464;

/**
 * The public images, pinned by release tag (no digest: none could be checked against the registries
 * from here, and a digest that is not checked is not worth pinning); `${NAME:-image}` in the overlay,
 * so the caller's shell can override. Jaeger is v2, a build of the OpenTelemetry Collector: its image
 * runs the all-in-one configuration (in-memory storage, OTLP on 4317/4318, the UI on 16686) as it is.
 */
export const OBSERVABILITY_IMAGES = {
  PROMETHEUS_IMAGE: "prom/prometheus:v3.15.0",
  OTEL_COLLECTOR_IMAGE: "otel/opentelemetry-collector-contrib:0.162.0",
  JAEGER_IMAGE: "jaegertracing/jaeger:2.22.0",
  GRAFANA_IMAGE: "grafana/grafana:12.4.12",
} as const;

/** Files under docker/ copied as they are to DIR/observability/ (paths relative to both). */
export const OBSERVABILITY_COPIES = [
  "otel-collector.yaml",
  "grafana/provisioning",
  "grafana/dashboards",
] as const;

/** The template of the generated Prometheus config, under docker/. */
export const PROMETHEUS_TEMPLATE = "prometheus.yml";

/** A node the overlay turns telemetry on for and Prometheus scrapes. */
export interface ObservedNode {
  readonly id: string;
  readonly role: "peer" | "coordinator";
  readonly region: string;
  readonly gateway?: string;
}

const LABELS = { "org.tailswarm.testbed": "docker", "org.tailswarm.role": "observability" };

/** `127.0.0.1:${VAR-default}:port`: loopback only; VAR set empty lets docker pick a free host port. */
const published = (variable: string, port: number): string => `127.0.0.1:\${${variable}-${port}}:${port}`;

/**
 * The Prometheus config: the template's settings and jobs, plus `tailswarm-peers` and
 * `tailswarm-coordinators` with one static target per generated node. Static targets rather than
 * DNS discovery: a killed container stays a target and shows as `up == 0` under its own name.
 */
export function prometheusConfig(template: string, nodes: readonly ObservedNode[]): string {
  const base = (parse(template) ?? {}) as { scrape_configs?: unknown[] };
  if (typeof base !== "object" || Array.isArray(base)) {
    throw invalid(PROMETHEUS_TEMPLATE, base, "a mapping at the top", { code: "INVALID_CONFIG" });
  }
  const job = (name: string, role: ObservedNode["role"]): unknown => ({
    job_name: name,
    static_configs: nodes
      .filter((n) => n.role === role)
      .map((n) => ({
        targets: [`${n.id}:${METRICS_PORT}`],
        labels: { node: n.id, region: n.region, ...(n.gateway !== undefined && { gateway: n.gateway }) },
      })),
  });
  const scrape = [
    job("tailswarm-coordinators", "coordinator"),
    job("tailswarm-peers", "peer"),
    ...(base.scrape_configs ?? []),
  ];
  return stringify({ ...base, scrape_configs: scrape }, { lineWidth: 0 });
}

/** The overlay's compose document (services only: it joins the base file's `wan`). */
export function observabilityOverlay(nodes: readonly ObservedNode[]): Record<string, unknown> {
  const services: Record<string, unknown> = {};
  for (const n of nodes) {
    services[n.id] = {
      environment: {
        OTEL_SDK_DISABLED: "false",
        TAILSWARM_METRICS_PROMETHEUS_PORT: String(METRICS_PORT),
      },
    };
  }
  const image = (name: keyof typeof OBSERVABILITY_IMAGES): string =>
    `\${${name}:-${OBSERVABILITY_IMAGES[name]}}`;
  services.prometheus = {
    image: image("PROMETHEUS_IMAGE"),
    command: [
      "--config.file=/etc/prometheus/prometheus.yml",
      "--storage.tsdb.path=/prometheus",
      "--storage.tsdb.retention.time=1d",
      "--web.enable-lifecycle",
    ],
    volumes: ["./observability/prometheus.yml:/etc/prometheus/prometheus.yml:ro"],
    ports: [published("TAILSWARM_PROMETHEUS_PORT", 9090)],
    labels: LABELS,
    networks: ["wan"],
  };
  services["otel-collector"] = {
    image: image("OTEL_COLLECTOR_IMAGE"),
    profiles: ["traces"],
    command: ["--config=/etc/otelcol/config.yaml"],
    volumes: ["./observability/otel-collector.yaml:/etc/otelcol/config.yaml:ro"],
    depends_on: ["jaeger"],
    labels: LABELS,
    networks: ["wan"],
  };
  services.jaeger = {
    image: image("JAEGER_IMAGE"),
    profiles: ["traces"],
    ports: [published("TAILSWARM_JAEGER_PORT", 16686)],
    labels: LABELS,
    networks: ["wan"],
  };
  services.grafana = {
    image: image("GRAFANA_IMAGE"),
    profiles: ["grafana"],
    environment: {
      GF_AUTH_ANONYMOUS_ENABLED: "true",
      GF_AUTH_ANONYMOUS_ORG_ROLE: "Admin",
      GF_AUTH_DISABLE_LOGIN_FORM: "true",
      GF_USERS_DEFAULT_THEME: "light",
      GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH: "/var/lib/grafana/dashboards/tailswarm.json",
    },
    volumes: [
      "./observability/grafana/provisioning:/etc/grafana/provisioning:ro",
      "./observability/grafana/dashboards:/var/lib/grafana/dashboards:ro",
    ],
    ports: [published("TAILSWARM_GRAFANA_PORT", 3000)],
    depends_on: ["prometheus"],
    labels: LABELS,
    networks: ["wan"],
  };
  return { services };
}

export const OVERLAY_HEADER = (scenarioFile: string): string =>
  [
    `# GENERATED from ${scenarioFile} with compose.yml (tailswarm testbed --emit-compose DIR). Do not edit.`,
    "# The observability overlay: telemetry on in every node, Prometheus scraping each node's metrics",
    `# port (${METRICS_PORT}), and with their profiles the OTel Collector + Jaeger (\`traces\`) and Grafana with`,
    "# the tailswarm dashboard (`grafana`). docker/testbed.sh --observability uses it; by hand:",
    '#   eval "$(docker/observability-images.sh DIR)"   # images at hand, profiles, traces off without a collector',
    "#   docker-compose -f DIR/compose.yml -f DIR/compose.observability.yml -p NAME up -d",
    "# Host ports (loopback only): Prometheus 9090, Grafana 3000, Jaeger 16686; TAILSWARM_PROMETHEUS_PORT,",
    "# TAILSWARM_GRAFANA_PORT, TAILSWARM_JAEGER_PORT change them (set empty: docker picks a free port).",
    "",
  ].join("\n");
