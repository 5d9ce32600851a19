/**
 * The generated compose files are valid as docker-compose reads them (`config -q`; the public
 * observability images cannot be pulled here, so `config` is the check): the swarm of `smoke` and
 * `seed-nat-tail` as `tailswarm testbed --emit-compose` writes it, alone and with its observability
 * overlay (every profile on), and the generated Prometheus config passes promtool.
 * Skipped unless TAILSWARM_DOCKER_TESTS=1 (needs docker-compose, not a running engine).
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { emitCompose } from "../../src/testbed/compose-emit.js";
import { loadScenario } from "../../src/testbed/scenario-loader.js";
import { requireBackend } from "../support/backend.js";

const run = promisify(execFile);
const enabled = process.env.TAILSWARM_DOCKER_TESTS === "1";

async function compose(dir: string, files: string[], args: string[], env: Record<string, string> = {}) {
  const f = files.flatMap((name) => ["-f", join(dir, name)]);
  const { stdout } = await run("docker-compose", [...f, "-p", "tailswarm-config-test", ...args], {
    cwd: dir,
    maxBuffer: 16 << 20,
    env: { ...process.env, ...env },
  });
  return stdout;
}

describe.skipIf(!enabled)("generated compose files", () => {
  let root = "";
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), "tailswarm-compose-config-"));
  });
  afterAll(async () => {
    if (root !== "") await rm(root, { recursive: true, force: true });
  });

  for (const name of ["smoke", "seed-nat-tail"]) {
    it(`${name}: the swarm, and the swarm with the observability overlay`, async () => {
      const s = await loadScenario(name);
      const dir = join(root, name);
      await emitCompose(s, dir);
      await compose(dir, ["compose.yml"], ["config", "-q"]);
      const nodes = (await compose(dir, ["compose.yml"], ["config", "--services"])).trim().split("\n");
      expect(nodes).toContain("loadgen");

      const both = ["compose.yml", "compose.observability.yml"];
      await compose(dir, both, ["config", "-q"]);
      await compose(dir, both, ["config", "-q"], { COMPOSE_PROFILES: "traces,grafana" });
      const all = (await compose(dir, both, ["config", "--services"])).trim().split("\n");
      expect(all.sort()).toEqual([...nodes, "prometheus", "otel-collector", "jaeger", "grafana"].sort());
      // Host ports on loopback only; an empty port variable lets docker choose.
      const resolved = await compose(dir, both, ["config"], { TAILSWARM_PROMETHEUS_PORT: "" });
      expect(resolved).toContain("127.0.0.1::9090");
      expect(resolved).not.toMatch(/- 0\.0\.0\.0:|- "?\d+:\d+/);
    }, 60_000);
  }

  it("the generated prometheus.yml passes promtool", async () => {
    const have = requireBackend("promtool", existsSync("/usr/bin/promtool"), "install Debian's prometheus");
    if (!have) return;
    const dir = join(root, "promtool");
    await emitCompose(await loadScenario("seed-nat-tail"), dir);
    const { stdout } = await run("promtool", [
      "check",
      "config",
      join(dir, "observability", "prometheus.yml"),
    ]);
    expect(stdout).toContain("SUCCESS");
  }, 60_000);
});
