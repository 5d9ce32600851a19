/**
 * The compose files are valid as docker-compose reads them (their public images cannot be pulled
 * here, so `config` is the check), and Prometheus's config passes promtool when it is installed.
 * Skipped unless TAILSWARM_DOCKER_TESTS=1 (needs docker-compose, not a running engine).
 */
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const run = promisify(execFile);
const enabled = process.env.TAILSWARM_DOCKER_TESTS === "1";
const dir = fileURLToPath(new URL("../../docker/", import.meta.url));

async function compose(...args: string[]): Promise<string> {
  const { stdout } = await run("docker-compose", args, { cwd: dir, maxBuffer: 16 << 20 });
  return stdout;
}

describe.skipIf(!enabled)("compose files", () => {
  it("the swarm: 40 peers in three regions, three coordinators, the load generator", async () => {
    const services = (await compose("-f", "compose.yml", "config", "--services")).split("\n");
    for (const s of ["peers-eu", "peers-us", "peers-ap", "gateway-eu", "loadgen"]) {
      expect(services).toContain(s);
    }
    expect(services.filter((s) => s.startsWith("coordinator-"))).toHaveLength(3);
    const config = await compose("-f", "compose.yml", "config");
    const replicas = [...config.matchAll(/replicas: (\d+)/g)].map((m) => Number(m[1]));
    expect(replicas.reduce((a, b) => a + b, 0)).toBe(40);
  }, 60_000);

  it("the observability overlay on top of the swarm", async () => {
    await compose("-f", "compose.yml", "-f", "compose.observability.yml", "config", "-q");
    const services = await compose(
      "-f",
      "compose.yml",
      "-f",
      "compose.observability.yml",
      "config",
      "--services",
    );
    for (const s of ["otel-collector", "jaeger", "prometheus", "grafana"]) expect(services).toContain(s);
  }, 60_000);

  it("prometheus.yml passes promtool (when installed)", async () => {
    const promtool = await run("sh", ["-c", "command -v promtool"]).catch(() => null);
    if (promtool === null) return;
    const { stdout } = await run("promtool", ["check", "config", "prometheus.yml"], { cwd: dir });
    expect(stdout).toContain("SUCCESS");
  }, 60_000);
});
