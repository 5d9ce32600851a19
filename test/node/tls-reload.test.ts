/**
 * Certificate rotation without a restart, with certificates made by openssl and files laid out as
 * Kubernetes mounts a Secret (each file a symlink through `..data`, swapped atomically): new
 * connections see the new certificate, open ones keep working, a bad new set is refused with the
 * reason logged and the previous set kept; a peer's channel follows a rotated CA bundle.
 */
import { copyFileSync, mkdirSync, readFileSync, renameSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { connect } from "node:tls";
import * as grpc from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { swarmService } from "../../src/mesh/proto.js";
import { NodeClient } from "../../src/node/client.js";
import { createLogger } from "../../src/node/logger.js";
import type { SwarmNode } from "../../src/node/node.js";
import { TlsFiles } from "../../src/node/tls-files.js";
import { requireBackend } from "../support/backend.js";
import { opensslAvailable, opensslCerts } from "../support/openssl-certs.js";
import { scratchDir } from "../support/scratch-dir.js";
import { startNode } from "./helpers/in-process-node.js";

requireBackend("openssl", opensslAvailable, "apt-get install openssl");

const dir = scratchDir("tls-reload");
const f = (name: string): string => join(dir(), name);
const certs = opensslCerts(dir);
const LOCAL = "IP:127.0.0.1,DNS:localhost";

/**
 * A Secret-style mount: `mount/tls.crt` → `..data/tls.crt` → `..<version>/tls.crt`. `publish` lays a
 * new version and swaps `..data` in one rename, as the kubelet does.
 */
function secretMount(name: string): {
  path: (file: string) => string;
  publish: (files: Record<string, string>) => void;
} {
  const mount = f(name);
  mkdirSync(mount);
  let version = 0;
  return {
    path: (file) => join(mount, file),
    publish(files) {
      const v = `..v${++version}`;
      mkdirSync(join(mount, v));
      for (const [file, from] of Object.entries(files)) copyFileSync(from, join(mount, v, file));
      symlinkSync(v, join(mount, "..data_tmp"));
      renameSync(join(mount, "..data_tmp"), join(mount, "..data"));
      if (version === 1)
        for (const file of Object.keys(files)) symlinkSync(join("..data", file), join(mount, file));
    },
  };
}

/** The subject CN of the certificate a fresh TLS connection to `address` is served. */
function servedCn(address: string, client: { cert: string; key: string }): Promise<string> {
  const [host, port] = [
    address.slice(0, address.lastIndexOf(":")),
    Number(address.slice(address.lastIndexOf(":") + 1)),
  ];
  return new Promise((resolve, reject) => {
    const socket = connect({
      host,
      port,
      cert: readFileSync(client.cert),
      key: readFileSync(client.key),
      ALPNProtocols: ["h2"],
      servername: "localhost",
      rejectUnauthorized: false, // the CN is what is asked; the gRPC calls check the chain
    });
    socket.once("secureConnect", () => {
      const cn = socket.getPeerCertificate().subject.CN;
      socket.destroy();
      resolve(Array.isArray(cn) ? cn.join(",") : (cn ?? ""));
    });
    socket.once("error", reject);
  });
}

const lines: Record<string, unknown>[] = [];
const log = createLogger({
  level: "info",
  write: (l) => void lines.push(JSON.parse(l) as Record<string, unknown>),
});
const logged = (msg: string): Record<string, unknown>[] => lines.filter((l) => l.msg === msg);
async function until(cond: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<boolean> {
  for (const end = Date.now() + timeoutMs; Date.now() < end; await new Promise((r) => setTimeout(r, 50))) {
    if (await cond()) return true;
  }
  return cond();
}

let node: SwarmNode | undefined;
const mount = secretMount("node-a-tls");

beforeAll(async () => {
  if (!opensslAvailable) return;
  certs.ca("ca");
  certs.ca("ca2");
  for (const n of ["a-v1", "a-v2", "a-v3", "client"]) certs.cert(n, { ca: "ca", san: LOCAL });
  certs.cert("a-ca2", { ca: "ca2", san: LOCAL });
  writeFileSync(f("both-cas.pem"), Buffer.concat([readFileSync(f("ca.pem")), readFileSync(f("ca2.pem"))]));
  mount.publish({ "tls.crt": f("a-v1.pem"), "tls.key": f("a-v1.key"), "ca.crt": f("ca.pem") });
  node = await startNode(
    [
      ...["--node-id", "a", "--listen", "127.0.0.1:0", "--tls-ca", mount.path("ca.crt")],
      ...["--tls-cert", mount.path("tls.crt"), "--tls-key", mount.path("tls.key")],
      ...["--tls-require-client-cert", "--tls-reload-interval-ms", "100"],
    ],
    {},
    log,
  );
}, 60_000);

afterAll(() => {
  node?.forceStop();
});

const client = { cert: f("client.pem"), key: f("client.key") };

describe.skipIf(!opensslAvailable)("TLS certificates reloaded from disk", () => {
  it("serves the rotated certificate to new connections, keeps open ones, without a restart", async () => {
    const startedAt = node!.status().startedAtUnixMs;
    const open = new NodeClient(node!.address, { ca: f("ca.pem"), ...client });
    try {
      expect((await open.status()).nodeId).toBe("a");
      expect(await servedCn(node!.address, client)).toBe("a-v1");

      mount.publish({ "tls.crt": f("a-v2.pem"), "tls.key": f("a-v2.key"), "ca.crt": f("ca.pem") });
      expect(await until(async () => (await servedCn(node!.address, client)) === "a-v2")).toBe(true);
      const reloaded = logged("tls reloaded").at(-1);
      expect(reloaded).toMatchObject({ module: "tls", level: "info", changed: ["tls.cert", "tls.key"] });
      expect(String(reloaded?.subject)).toContain("CN=a-v2");

      expect((await open.status()).nodeId).toBe("a"); // the connection opened before the rotation
      const fresh = new NodeClient(node!.address, { ca: f("ca.pem"), ...client });
      try {
        expect((await fresh.status()).startedAtUnixMs).toBe(startedAt); // same process, no restart
      } finally {
        fresh.close();
      }
    } finally {
      open.close();
    }
  });

  it("refuses a bad new set (a key that is not the certificate's), logs why, and keeps serving the old one", async () => {
    const before = logged("tls reload refused; keeping the previous certificate").length;
    mount.publish({ "tls.crt": f("a-v3.pem"), "tls.key": f("a-v1.key"), "ca.crt": f("ca.pem") });
    expect(
      await until(() => logged("tls reload refused; keeping the previous certificate").length > before),
    ).toBe(true);
    const refused = logged("tls reload refused; keeping the previous certificate").at(-1);
    expect(refused?.level).toBe("warn");
    expect(String(refused?.reason)).toMatch(
      /^tls\.key: got ".*tls\.key", expected the private key of tls\.cert/,
    );
    await new Promise((r) => setTimeout(r, 400)); // several more intervals: logged once, still refused
    expect(logged("tls reload refused; keeping the previous certificate").length).toBe(before + 1);
    expect(await servedCn(node!.address, client)).toBe("a-v2");

    mount.publish({ "tls.crt": f("a-v3.pem"), "tls.key": f("a-v3.key"), "ca.crt": f("ca.pem") });
    expect(await until(async () => (await servedCn(node!.address, client)) === "a-v3")).toBe(true);
  });

  it("channel credentials follow their CA bundle: new connections verify against the rotated one", async () => {
    const callerMount = secretMount("caller-tls");
    callerMount.publish({ "tls.crt": f("client.pem"), "tls.key": f("client.key"), "ca.crt": f("ca.pem") });
    const files = TlsFiles.open(
      {
        ca: callerMount.path("ca.crt"),
        cert: callerMount.path("tls.crt"),
        key: callerMount.path("tls.key"),
        requireClientCert: false,
        reloadIntervalMs: 0,
      },
      { log },
    );
    const probe = (): Promise<string> => {
      const c = new grpc.Client(node!.address, files.channelCredentials(), {
        "grpc.ssl_target_name_override": "localhost",
      });
      const m = swarmService().Probe;
      return new Promise<string>((resolve, reject) =>
        c.makeUnaryRequest(
          m.path,
          m.requestSerialize as (v: unknown) => Buffer,
          m.responseDeserialize as (b: Buffer) => { nodeId: string },
          { sentUnixMs: Date.now() },
          new grpc.Metadata(),
          { deadline: Date.now() + 3_000 },
          (err, reply) =>
            err || reply === undefined ? reject(err ?? new Error("empty")) : resolve(reply.nodeId),
        ),
      ).finally(() => c.close());
    };
    try {
      expect(await probe()).toBe("a");
      // Node a moves to a certificate from a second CA: a caller trusting only the first is refused...
      mount.publish({ "tls.crt": f("a-ca2.pem"), "tls.key": f("a-ca2.key"), "ca.crt": f("ca.pem") });
      expect(await until(async () => (await servedCn(node!.address, client)) === "a-ca2")).toBe(true);
      await expect(probe()).rejects.toMatchObject({ code: grpc.status.UNAVAILABLE });
      // ...until its bundle holds both: the same credentials, reloaded, reach it on a new connection.
      callerMount.publish({
        "tls.crt": f("client.pem"),
        "tls.key": f("client.key"),
        "ca.crt": f("both-cas.pem"),
      });
      expect(files.reload()).toBe("reloaded");
      expect(await probe()).toBe("a");
    } finally {
      files.close();
    }
  });
});
