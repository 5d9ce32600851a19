import { execFile } from "node:child_process";
import { promisify } from "node:util";
import * as grpc from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  addDecisionsService,
  decisionsSource,
  fetchDecisions,
} from "../../src/telemetry/decisions-service.js";
import { FlightRecorder } from "../../src/telemetry/flight-recorder.js";
import { collectModel, rig, task } from "./helpers.js";

const run = promisify(execFile);
let server: grpc.Server;
let address = "";
const recorder = new FlightRecorder({ capacity: 8 });

beforeAll(async () => {
  const h = rig(recorder);
  for (const p of ["a", "b"]) {
    h.transport.addPeer(p, { latency: 10, handler: () => p });
    h.warm(p, 10);
  }
  for (const budgetMs of [200, 5, 200]) {
    await h.clock.runUntilSettled(
      h.coordinator.fanOut(task, { peers: ["a", "b"], budgetMs, model: collectModel(), fallback: () => "x" }),
    );
  }
  server = new grpc.Server();
  addDecisionsService(server, decisionsSource("node-7", recorder));
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (e, p) =>
      e ? reject(e) : resolve(p),
    ),
  );
  address = `127.0.0.1:${port}`;
});
afterAll(() => server?.forceShutdown());

describe("Decisions service and `tailswarm decisions`", () => {
  it("returns the recorder's decisions over gRPC, identical to the in-memory records", async () => {
    const reply = await fetchDecisions(address, { last: 2 });
    expect(reply).toMatchObject({ nodeId: "node-7", capacity: 8, recorded: 3 });
    expect(reply.decisions).toEqual(recorder.last(2));
    expect(reply.decisions.map((d) => d.mode)).toEqual(["speculate", "degrade"]);
    expect((await fetchDecisions(address)).decisions).toHaveLength(3);
  });

  it("prints them, as text and as JSON, through the CLI", async () => {
    const cli = ["--import", "tsx", "src/cli/main.ts", "decisions", address];
    const text = await run(process.execPath, [...cli, "--last", "2"], { cwd: process.cwd() });
    expect(text.stdout).toContain("node node-7: 2 of 3 decisions");
    expect(text.stdout).toContain("SPECULATE  (budget-exceeds-p99-plus-abandon-cost)");
    expect(text.stdout).toContain("DEGRADE  (budget-at-or-below-p50)");
    const json = JSON.parse((await run(process.execPath, [...cli, "--json"], { cwd: process.cwd() })).stdout);
    expect(json.decisions).toHaveLength(3);
    expect(json.decisions[0].reason).toBe("budget-exceeds-p99-plus-abandon-cost");
  });

  it("exits 1 naming the address when the node cannot be reached, 2 on bad usage", async () => {
    const cli = ["--import", "tsx", "src/cli/main.ts", "decisions"];
    const down = await run(process.execPath, [...cli, "127.0.0.1:1", "--timeout-ms", "500"]).catch((e) => e);
    expect(down.code).toBe(1);
    expect(down.stderr).toContain("127.0.0.1:1");
    const usage = await run(process.execPath, [...cli, "--last", "x", address]).catch((e) => e);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain("--last");
  });
});
