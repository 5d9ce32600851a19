/**
 * gRPC credentials from the node's TLS config: server credentials (with client-certificate checking
 * for mutual TLS) and channel credentials for calls to peers (presenting this node's certificate, so
 * that peers requiring client certificates accept it). No TLS config → insecure (plaintext).
 */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import type { ChannelCredentials } from "@grpc/grpc-js";
import { ServerCredentials, credentials } from "@grpc/grpc-js";
import { TailswarmError } from "../errors.js";
import type { TlsConfig } from "./config/types.js";

export interface TlsMaterial {
  readonly ca?: Buffer;
  readonly cert?: Buffer;
  readonly key?: Buffer;
  readonly requireClientCert: boolean;
}

export function tlsEnabled(tls: TlsConfig): boolean {
  return tls.cert !== undefined || tls.key !== undefined || tls.ca !== undefined || tls.requireClientCert;
}

function read(path: string | undefined, field: string, baseDir: string): Buffer | undefined {
  if (path === undefined) return undefined;
  try {
    const data = readFileSync(resolve(baseDir, path));
    if (!data.includes("-----BEGIN ")) {
      throw new Error("no PEM block (-----BEGIN ...) in the file");
    }
    return data;
  } catch (err) {
    throw new TailswarmError(
      "INVALID_CONFIG",
      `${field}: got ${JSON.stringify(path)}, expected a readable PEM file (${(err as Error).message})`,
      { cause: err },
    );
  }
}

export function readTlsMaterial(tls: TlsConfig, baseDir = process.cwd()): TlsMaterial {
  return {
    ...(tls.ca !== undefined && { ca: read(tls.ca, "tls.ca", baseDir) }),
    ...(tls.cert !== undefined && { cert: read(tls.cert, "tls.cert", baseDir) }),
    ...(tls.key !== undefined && { key: read(tls.key, "tls.key", baseDir) }),
    requireClientCert: tls.requireClientCert,
  };
}

export function serverCredentials(m: TlsMaterial | undefined): ServerCredentials {
  if (m === undefined || m.cert === undefined || m.key === undefined)
    return ServerCredentials.createInsecure();
  return ServerCredentials.createSsl(
    m.ca ?? null,
    [{ cert_chain: m.cert, private_key: m.key }],
    m.requireClientCert,
  );
}

/** Credentials for calls to peers (and for the CLI's client verbs). */
export function channelCredentials(m: TlsMaterial | undefined): ChannelCredentials {
  if (m === undefined || (m.ca === undefined && m.cert === undefined)) return credentials.createInsecure();
  return credentials.createSsl(m.ca ?? null, m.key ?? null, m.cert ?? null);
}
