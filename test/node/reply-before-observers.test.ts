/**
 * The coordinator replies before its fan-out observers (telemetry, the flight recorder, health) hear
 * of the fan-out: real nodes on loopback, the caller a separate `tailswarm coordinate` process, and an
 * observer that holds the coordinator's event loop far longer than the caller's deadline once told of
 * the fan-out's end. The caller still gets its answer; the observer is still told, with the same outcome.
 * Runs the built CLI (npm run build first).
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FanoutOutcome } from "../../src/engine/outcome.js";
import { loadConfig } from "../../src/node/config/load-config.js";
import { SwarmNode } from "../../src/node/node.js";
import { startNode, untilPeersUp } from "./helpers/in-process-node.js";

const MAIN = resolve("dist/cli/main.js");
const HOLD_MS = 1_500;
const DEADLINE_MS = 500;

const nodes: SwarmNode[] = [];
const told: FanoutOutcome[] = [];

function coordinateJson(address: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(
      process.execPath,
      [
        ...[MAIN, "coordinate", address, "--task", "vote", "--payload", '{"question":"ship?"}'],
        ...["--options", '{"options":["ship","hold"],"prior":"hold"}', "--deadline-ms", String(DEADLINE_MS)],
        "--json",
      ],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("exit", (code) => done({ code, stdout, stderr }));
  });
}

describe.skipIf(!existsSync(MAIN))("a coordinator whose observers are slow", () => {
  beforeAll(async () => {
    nodes.push(
      await startNode(["--node-id", "peer", "--listen", "127.0.0.1:0"], {
        handlers: [{ kind: "vote", use: "vote", options: { stance: "ship" } }],
      }),
    );
    const c = await loadConfig({
      argv: ["--node-id", "coord", "--listen", "127.0.0.1:0", "--peers", nodes[0]!.address],
      env: {},
    });
    const slow = {
      onFanoutEnd: (o: FanoutOutcome): void => {
        told.push(o);
        for (const end = Date.now() + HOLD_MS; Date.now() < end;); // holds the loop, as a stalled exporter would
      },
    };
    nodes.push(await SwarmNode.start({ config: c.config, observers: [slow] }));
    await untilPeersUp(nodes[1]!, 1);
  }, 60_000);

  afterAll(() => {
    for (const n of nodes) n.forceStop();
  });

  it("answers the caller first, then tells the observer the same fan-out", async () => {
    const r = await coordinateJson(nodes[1]!.address);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const reply = JSON.parse(r.stdout) as { fanoutId: string; action: string; committed: number };
    expect(reply.committed).toBe(1);
    expect(reply.action).toBe("ship");
    await new Promise((r) => setImmediate(r));
    expect(told.map((o) => o.fanoutId)).toEqual([reply.fanoutId]);
  }, 30_000);
});
