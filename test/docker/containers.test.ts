/**
 * The node image in real containers: build it, start two containers on a user-defined network,
 * and check that they find each other by DNS name and that the image's health check (through
 * grpc.health.v1) passes. Skipped unless TAILSWARM_DOCKER_TESTS=1 (CI sets it after
 * docker/ensure-docker.sh). Leaves no container or network behind.
 *
 * TODO(node): run `tailswarm node` itself instead of the health-server stand-in, then a fan-out
 * across containers with a propagated deadline and a killed container marked down.
 */
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const run = promisify(execFile);
const enabled = process.env.TAILSWARM_DOCKER_TESTS === "1";
const repo = fileURLToPath(new URL("../..", import.meta.url));
const image = process.env.TAILSWARM_IMAGE ?? "tailswarm:test";
const suffix = randomBytes(3).toString("hex");
const network = `tailswarm-test-${suffix}`;
const names = [`peer-a-${suffix}`, `peer-b-${suffix}`] as const;
const fixture = fileURLToPath(new URL("./fixtures/health-server.mjs", import.meta.url));

async function docker(...args: string[]): Promise<string> {
  const { stdout } = await run("docker", args, { maxBuffer: 16 << 20 });
  return stdout.trim();
}

async function healthOf(name: string): Promise<string> {
  return docker("inspect", "-f", "{{.State.Health.Status}}", name);
}

async function waitForHealth(name: string, want: string, timeoutMs: number): Promise<string> {
  const until = Date.now() + timeoutMs;
  let status = await healthOf(name);
  while (status !== want && Date.now() < until) {
    await new Promise((r) => setTimeout(r, 500));
    status = await healthOf(name);
  }
  return status;
}

describe.skipIf(!enabled)("node image in containers", () => {
  beforeAll(async () => {
    if (process.env.TAILSWARM_SKIP_IMAGE_BUILD !== "1") {
      await run("bash", [`${repo}/docker/build-image.sh`], {
        env: { ...process.env, TAILSWARM_IMAGE: image },
        maxBuffer: 64 << 20,
      });
    }
    await docker("network", "create", "--label", "tailswarm.test=1", network);
    for (const name of names) {
      await docker(
        "run",
        "-d",
        "--name",
        name,
        "--network",
        network,
        "--label",
        "tailswarm.test=1",
        "--health-interval",
        "1s",
        "--health-start-period",
        "5s",
        "-v",
        `${fixture}:/app/test-fixture/health-server.mjs:ro`,
        "--entrypoint",
        "node",
        image,
        "test-fixture/health-server.mjs",
      );
    }
  }, 600_000);

  afterAll(async () => {
    await docker("rm", "-f", "-v", ...names).catch(() => "");
    await docker("network", "rm", network).catch(() => "");
  }, 60_000);

  it("runs as a non-root user with the tailswarm CLI as entrypoint", async () => {
    const user = await docker("image", "inspect", "-f", "{{.Config.User}}", image);
    expect(user).toBe("node");
    const help = await docker("run", "--rm", image, "--help");
    expect(help).toContain("usage: tailswarm");
  }, 90_000);

  it("runs Node of .nvmrc's major and carries the OCI version and revision labels", async () => {
    const major = readFileSync(`${repo}/.nvmrc`, "utf8").trim().replace(/^v/, "").split(".")[0]!;
    const version = await docker("run", "--rm", "--entrypoint", "node", image, "--version");
    expect(version).toMatch(new RegExp(`^v${major}\\.`));
    const labels = JSON.parse(
      await docker("image", "inspect", "-f", "{{json .Config.Labels}}", image),
    ) as Record<string, string>;
    const pkg = JSON.parse(readFileSync(`${repo}/package.json`, "utf8")) as { version: string };
    expect(labels["org.opencontainers.image.version"]).toBe(pkg.version);
    if (process.env.TAILSWARM_SKIP_IMAGE_BUILD !== "1") {
      // Built from this checkout here: its commit (and -dirty when it has uncommitted changes).
      const head = (await run("git", ["-C", repo, "rev-parse", "HEAD"])).stdout.trim();
      expect(labels["org.opencontainers.image.revision"]).toMatch(new RegExp(`^${head}(-dirty)?$`));
    }
  }, 90_000);

  it("resolves the other container by name on the user-defined network", async () => {
    const [a, b] = names;
    const lookup =
      "require('dns').lookup(process.argv[1], (e, addr) => { if (e) throw e; console.log(addr); })";
    const fromA = await docker("exec", a, "node", "-e", lookup, b);
    const ipB = await docker(
      "inspect",
      "-f",
      `{{(index .NetworkSettings.Networks "${network}").IPAddress}}`,
      b,
    );
    expect(fromA).toBe(ipB);
    const fromB = await docker("exec", b, "node", "-e", lookup, a);
    expect(fromB).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
  }, 90_000);

  it("passes the image's gRPC health check, locally and across containers", async () => {
    for (const name of names) expect(await waitForHealth(name, "healthy", 30_000)).toBe("healthy");
    const [a, b] = names;
    const across = await docker("exec", a, "node", "docker/healthcheck.mjs", `${b}:7400`);
    expect(across).toContain("SERVING");
  }, 90_000);

  it("drains on SIGTERM: exits 0 well within the stop timeout", async () => {
    const [, b] = names;
    const started = Date.now();
    await docker("stop", "-t", "10", b);
    expect(Date.now() - started).toBeLessThan(9_000);
    expect(await docker("inspect", "-f", "{{.State.ExitCode}}", b)).toBe("0");
  }, 90_000);
});
