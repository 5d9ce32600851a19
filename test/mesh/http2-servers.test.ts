/**
 * The one private grpc-js field the node reads (`http2Servers`, see src/mesh/http2-servers.ts): the
 * HTTP/2 servers it finds are the ones listening, and a grpc-js without the field stops the node from
 * starting rather than leaving it unguarded. A grpc-js upgrade that moves the field fails here first.
 */
import * as grpc from "@grpc/grpc-js";
import { afterAll, describe, expect, it } from "vitest";
import { http2ServersOf } from "../../src/mesh/http2-servers.js";
import { startServer } from "./helpers.js";
import type { Started } from "./helpers.js";

describe("grpc-js's HTTP/2 servers", () => {
  let s: Started | undefined;
  afterAll(() => s?.server.forceClose());

  it("are found after listen: one per bound address, listening on the bound port", async () => {
    s = await startServer({});
    const servers = http2ServersOf(s.server.grpcServer);
    expect(servers).toHaveLength(1);
    const address = servers[0]!.address();
    expect(typeof address === "object" && address?.port).toBe(s.port);
  });

  it("a grpc-js server without them is refused with INTERNAL, naming what is missing", () => {
    const bare = Object.assign(Object.create(grpc.Server.prototype) as grpc.Server, {
      http2Servers: undefined,
    });
    expect(() => http2ServersOf(bare)).toThrow(/no longer keeps `http2Servers`/);
  });
});
