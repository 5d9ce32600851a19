/** `tailswarm host`: several nodes in one process, each its own node; bad input named; signals as `node`. */
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { SwarmClient } from "../../src/testbed/swarm-client.js";
import { ROOT, runCli } from "../node/helpers/spawn-node.js";
import { scratchDir } from "../support/scratch-dir.js";

const dir = scratchDir("host");
const clients: SwarmClient[] = [];
afterAll(() => clients.forEach((c) => c.close()));

function config(name: string, body: Record<string, unknown>): string {
  const file = join(dir(), `${name}.json`);
  writeFileSync(file, JSON.stringify({ listen: "127.0.0.1:0", logLevel: "info", ...body }));
  return file;
}

describe("tailswarm host", () => {
  it("serves each config as its own node in one process and stops them all on SIGTERM (exit 0)", async () => {
    const a = config("a", { nodeId: "host-a", handlers: [{ kind: "echo", use: "echo" }] });
    const b = config("b", { nodeId: "host-b", region: "eu", handlers: [{ kind: "echo", use: "echo" }] });
    const child = spawn(
      process.execPath,
      ["--import", "tsx", join(ROOT, "src/cli/main.ts"), "host", "--config", a, "--config", b],
      {
        cwd: ROOT,
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    const exited = new Promise<number | null>((r) => child.on("exit", (code) => r(code)));
    let stderr = "";
    const hosting = await new Promise<{ nodeId: string; address: string }[]>((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`no 'hosting' line: ${stderr}`)), 60_000);
      child.stderr.on("data", (d: Buffer) => {
        stderr += d.toString();
        for (const line of stderr.split("\n")) {
          if (!line.includes('"msg":"hosting"')) continue;
          clearTimeout(t);
          resolve((JSON.parse(line) as { nodes: { nodeId: string; address: string }[] }).nodes);
        }
      });
    });
    expect(hosting.map((n) => n.nodeId)).toEqual(["host-a", "host-b"]);
    for (const n of hosting) {
      const c = new SwarmClient(n.address);
      clients.push(c);
      const r = await c.probe(5_000);
      expect(r.ok && r.value.nodeId).toBe(n.nodeId);
    }
    // Each node's log lines carry its id (they share stderr).
    expect(stderr).toMatch(/\{"nodeId":"host-b",[^\n]*"msg":"listening"/);
    child.kill("SIGTERM");
    expect(await exited).toBe(0);
    expect(stderr).toMatch(/"nodeId":"host-a"[^\n]*"msg":"stopped"/);
    expect(stderr).toMatch(/"nodeId":"host-b"[^\n]*"msg":"stopped"/);
  });

  it("refuses a missing --config (2), a duplicate nodeId (78) and a bad file naming it (78)", async () => {
    const none = await runCli(["host"]);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain("flag --config is required");

    const a = config("dup-a", { nodeId: "same" });
    const b = config("dup-b", { nodeId: "same" });
    const dup = await runCli(["host", "--config", a, "--config", b]);
    expect(dup.code).toBe(78);
    expect(dup.stderr).toContain('nodeId "same" is in more than one config file');

    const bad = config("bad", { nodeId: "x", probe: { intervalMs: -1 } });
    const r = await runCli(["host", "--config", a, "--config", bad]);
    expect(r.code).toBe(78);
    expect(r.stderr).toContain(`${bad}: `);
    expect(r.stderr).toContain("probe.intervalMs: got -1");
  });
});
