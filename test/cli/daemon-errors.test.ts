/**
 * A node that cannot start says so once: a port clash is one `tailswarm <verb>:` line and one hint,
 * with no grpc-js `E No address added` line and no second account of it in the log.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import type { Server } from "node:net";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ownLines, tailswarm } from "./dist.js";

let taken: Server;
let address: string;

beforeAll(async () => {
  taken = createServer();
  await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", () => resolve()));
  address = `127.0.0.1:${(taken.address() as AddressInfo).port}`;
});
afterAll(() => void taken.close());

describe("a port clash", () => {
  it("tailswarm node: one line, one hint, exit 1", async () => {
    const r = await tailswarm(["node", "--listen", address, "--node-id", "clash"]);
    expect(r.code).toBe(1);
    expect(ownLines(r.stderr)).toEqual([
      `tailswarm node: listen: cannot bind ${address}: the port is in use`,
      `hint: another process listens there ('tailswarm status ${address}' says whether it is a node); choose another port (--listen, TAILSWARM_LISTEN or listen: in the config file)`,
    ]);
    expect(r.stderr).not.toContain("start failed");
    expect(r.stderr).not.toContain("No address added");
  });

  it("tailswarm host: the same, naming the file", async () => {
    const dir = mkdtempSync(join(tmpdir(), "tailswarm-clash-"));
    const file = join(dir, "a.json");
    writeFileSync(file, JSON.stringify({ nodeId: "a", listen: address }));
    const r = await tailswarm(["host", "--config", file]);
    expect(r.code).toBe(1);
    expect(ownLines(r.stderr)).toEqual([
      `tailswarm host: ${file}: listen: cannot bind ${address}: the port is in use`,
      `hint: another process listens there ('tailswarm status ${address}' says whether it is a node); choose another port (listen: in ${file})`,
    ]);
    rmSync(dir, { recursive: true, force: true });
  });

  it("GRPC_VERBOSITY set: grpc-js's own lines are left to it", async () => {
    const r = await tailswarm(["node", "--listen", address], { env: { GRPC_VERBOSITY: "ERROR" } });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("No address added");
  });
});
