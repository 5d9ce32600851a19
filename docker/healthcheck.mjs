#!/usr/bin/env node
/**
 * Container health check: calls grpc.health.v1.Health/Check (service "") on this container's own
 * node and exits 0 when it answers SERVING, 1 otherwise (NOT_SERVING while draining, no answer,
 * wrong status). Used by the image's HEALTHCHECK and by compose; needs only the runtime
 * dependencies (@grpc/grpc-js, grpc-health-check).
 *
 * Address: TAILSWARM_HEALTH_ADDR, else the node's TAILSWARM_LISTEN with a wildcard host replaced
 * by loopback, else 127.0.0.1:50051. TLS when TAILSWARM_TLS_CA is set (with the node's own
 * TAILSWARM_TLS_CERT/KEY as client certificate when present; the name is not checked: it is
 * this container's own node). Timeout: TAILSWARM_HEALTH_TIMEOUT_MS (default 2000).
 *
 *   node docker/healthcheck.mjs [host:port]
 */
import { readFileSync } from "node:fs";
import process from "node:process";
import grpc from "@grpc/grpc-js";
import health from "grpc-health-check";

const env = process.env;

/** host:port to dial for a listen address such as `0.0.0.0:50051`, `[::]:50051` or `:50051`. */
function dialAddress(listen) {
  const m = /^(.*):(\d+)$/.exec(listen.trim());
  if (m === null) return listen;
  const host = m[1] ?? "";
  const wildcard = host === "" || host === "0.0.0.0" || host === "[::]" || host === "::";
  return `${wildcard ? "127.0.0.1" : host}:${m[2]}`;
}

function credentials() {
  if (!env.TAILSWARM_TLS_CA) return grpc.credentials.createInsecure();
  const read = (p) => (p ? readFileSync(p) : null);
  return grpc.credentials.createSsl(
    read(env.TAILSWARM_TLS_CA),
    read(env.TAILSWARM_TLS_KEY),
    read(env.TAILSWARM_TLS_CERT),
    { checkServerIdentity: () => undefined },
  );
}

const target =
  process.argv[2] ??
  env.TAILSWARM_HEALTH_ADDR ??
  (env.TAILSWARM_LISTEN ? dialAddress(env.TAILSWARM_LISTEN) : "127.0.0.1:50051");
const timeoutMs = Number(env.TAILSWARM_HEALTH_TIMEOUT_MS ?? 2000);

const Health = grpc.makeClientConstructor(health.service, "grpc.health.v1.Health");
const client = new Health(target, credentials());

client.Check({ service: "" }, { deadline: Date.now() + timeoutMs }, (err, reply) => {
  client.close();
  if (err) {
    process.stderr.write(`health ${target}: ${err.code} ${err.details || err.message}\n`);
    process.exit(1);
  }
  const status = reply?.status;
  process.stdout.write(`health ${target}: ${status}\n`);
  process.exit(status === "SERVING" ? 0 : 1);
});
