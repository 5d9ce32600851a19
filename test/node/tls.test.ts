/** TLS and mutual TLS with certificates made by openssl at test time. */
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NodeClient } from "../../src/node/client.js";
import { loadConfig } from "../../src/node/config/load-config.js";
import { SwarmNode } from "../../src/node/node.js";
import { requireBackend } from "../support/backend.js";
import { opensslAvailable, opensslCerts } from "../support/openssl-certs.js";
import { scratchDir } from "../support/scratch-dir.js";

requireBackend("openssl", opensslAvailable, "apt-get install openssl");

const dir = scratchDir("tls");
const f = (name: string): string => join(dir(), name);
const certs = opensslCerts(dir);
const LOCAL = "IP:127.0.0.1,DNS:localhost";

let secure: SwarmNode | undefined;
let peer: SwarmNode | undefined;

beforeAll(async () => {
  if (!opensslAvailable) return;
  certs.ca("ca");
  certs.ca("rogue-ca");
  certs.cert("node-a", { ca: "ca", san: LOCAL });
  certs.cert("node-b", { ca: "ca", san: LOCAL });
  certs.cert("rogue", { ca: "rogue-ca", san: LOCAL });
  const tlsFlags = (name: string): string[] => [
    "--tls-ca",
    f("ca.pem"),
    "--tls-cert",
    f(`${name}.pem`),
    "--tls-key",
    f(`${name}.key`),
    "--tls-require-client-cert",
  ];
  const a = await loadConfig({
    argv: ["--node-id", "a", "--listen", "127.0.0.1:0", ...tlsFlags("node-a")],
    env: {},
  });
  secure = await SwarmNode.start({ config: a.config });
  const b = await loadConfig({
    argv: [
      "--node-id",
      "b",
      "--listen",
      "127.0.0.1:0",
      "--peers",
      secure.address,
      "--probe-interval-ms",
      "200",
      "--probe-timeout-ms",
      "200",
      ...tlsFlags("node-b"),
    ],
    env: {},
  });
  peer = await SwarmNode.start({ config: b.config });
}, 60_000);

afterAll(async () => {
  peer?.forceStop();
  secure?.forceStop();
});

describe.skipIf(!opensslAvailable)("mutual TLS", () => {
  it("serves a client that presents a certificate signed by the CA", async () => {
    const client = new NodeClient(secure!.address, {
      ca: f("ca.pem"),
      cert: f("node-b.pem"),
      key: f("node-b.key"),
    });
    try {
      expect((await client.status()).nodeId).toBe("a");
    } finally {
      client.close();
    }
  });

  it("refuses a client without a certificate, with a foreign one, or in plaintext", async () => {
    const attempts = [
      new NodeClient(secure!.address, { ca: f("ca.pem") }),
      new NodeClient(secure!.address, { ca: f("ca.pem"), cert: f("rogue.pem"), key: f("rogue.key") }),
      new NodeClient(secure!.address),
    ];
    for (const client of attempts) {
      try {
        await expect(client.status(3_000)).rejects.toMatchObject({ code: 14 }); // UNAVAILABLE
      } finally {
        client.close();
      }
    }
  });

  it("nodes with certificates from the CA coordinate with each other", async () => {
    const client = new NodeClient(peer!.address, {
      ca: f("ca.pem"),
      cert: f("node-a.pem"),
      key: f("node-a.key"),
    });
    try {
      for (let i = 0; i < 100 && !(await client.status()).peers.some((p) => p.peerId === "a" && p.up); i++) {
        await new Promise((r) => setTimeout(r, 100));
      }
      const r = await client.coordinate({ kind: "echo", payload: { vote: "yes" } }, 5_000);
      expect(r.committed).toBe(1);
      expect(r.action).toBe("yes");
    } finally {
      client.close();
    }
  });
});
