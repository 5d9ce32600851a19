/** TLS and mutual TLS with certificates made by openssl at test time. */
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NodeClient } from "../../src/node/client.js";
import { loadConfig } from "../../src/node/config/load-config.js";
import { SwarmNode } from "../../src/node/node.js";
import { requireBackend } from "../support/backend.js";
import { scratchDir } from "../support/scratch-dir.js";

let hasOpenssl = true;
try {
  execFileSync("openssl", ["version"], { stdio: "ignore" });
} catch {
  hasOpenssl = false;
}
requireBackend("openssl", hasOpenssl, "apt-get install openssl");

const dir = scratchDir("tls");
const f = (name: string): string => join(dir(), name);
const ossl = (...args: string[]): void => void execFileSync("openssl", args, { cwd: dir(), stdio: "ignore" });
const EC = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];

function makeCa(name: string): void {
  ossl(
    "req",
    "-x509",
    ...EC,
    "-keyout",
    `${name}.key`,
    "-out",
    `${name}.pem`,
    "-days",
    "1",
    "-subj",
    `/CN=${name}`,
  );
}
function makeCert(name: string, ca: string): void {
  ossl("req", ...EC, "-keyout", `${name}.key`, "-out", `${name}.csr`, "-subj", `/CN=${name}`);
  ossl(
    "x509",
    "-req",
    "-in",
    `${name}.csr`,
    "-CA",
    `${ca}.pem`,
    "-CAkey",
    `${ca}.key`,
    "-CAcreateserial",
    "-out",
    `${name}.pem`,
    "-days",
    "1",
    "-extfile",
    "san.cnf",
  );
}

let secure: SwarmNode | undefined;
let peer: SwarmNode | undefined;

beforeAll(async () => {
  if (!hasOpenssl) return;
  writeFileSync(f("san.cnf"), "subjectAltName=IP:127.0.0.1,DNS:localhost\n");
  makeCa("ca");
  makeCa("rogue-ca");
  makeCert("node-a", "ca");
  makeCert("node-b", "ca");
  makeCert("rogue", "rogue-ca");
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

describe.skipIf(!hasOpenssl)("mutual TLS", () => {
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
