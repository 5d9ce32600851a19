/**
 * The node's TLS material: the `tls.*` PEM files read and checked as one set (each file holds PEM,
 * the key belongs to the certificate, Node's TLS accepts the three together), so that a bad set is
 * refused with the field named — at start as a config error, on a reload as a reason to keep the
 * previous set (tls-files.ts).
 */
import { X509Certificate } from "node:crypto";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { createSecureContext } from "node:tls";
import { TailswarmError, expectation } from "../errors.js";
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
  let data: Buffer;
  try {
    data = readFileSync(resolve(baseDir, path));
  } catch (err) {
    throw new TailswarmError(
      "INVALID_CONFIG",
      expectation(field, path, `a readable PEM file (${(err as Error).message})`),
      { cause: err },
    );
  }
  if (!data.includes("-----BEGIN ")) {
    throw new TailswarmError(
      "INVALID_CONFIG",
      expectation(field, path, "a PEM file (no -----BEGIN ... block in it)"),
    );
  }
  return data;
}

/**
 * Reads and checks the files; throws INVALID_CONFIG naming the field at fault. `now` (epoch ms), when
 * given, also refuses a certificate outside its validity period (a reload must not swap a working
 * certificate for an expired one).
 */
export function readTlsMaterial(tls: TlsConfig, baseDir = process.cwd(), now?: number): TlsMaterial {
  const m: TlsMaterial = {
    ...(tls.ca !== undefined && { ca: read(tls.ca, "tls.ca", baseDir) }),
    ...(tls.cert !== undefined && { cert: read(tls.cert, "tls.cert", baseDir) }),
    ...(tls.key !== undefined && { key: read(tls.key, "tls.key", baseDir) }),
    requireClientCert: tls.requireClientCert,
  };
  const fail = (field: string, path: string | undefined, expected: string): never => {
    throw new TailswarmError("INVALID_CONFIG", expectation(field, path, expected));
  };
  try {
    createSecureContext({ ca: m.ca, cert: m.cert, key: m.key });
  } catch (err) {
    const message = (err as Error).message;
    if (/key values mismatch|private key/i.test(message))
      fail("tls.key", tls.key, `the private key of tls.cert (${message})`);
    const field = /ca|certificate authority/i.test(message) && m.ca !== undefined ? "tls.ca" : "tls.cert";
    fail(field, field === "tls.ca" ? tls.ca : tls.cert, `PEM that Node's TLS accepts (${message})`);
  }
  if (now !== undefined && m.cert !== undefined) {
    const cert = new X509Certificate(m.cert);
    if (Date.parse(cert.validTo) <= now)
      fail("tls.cert", tls.cert, `a certificate valid now (it expired ${cert.validTo})`);
    if (Date.parse(cert.validFrom) > now)
      fail("tls.cert", tls.cert, `a certificate valid now (it is valid from ${cert.validFrom})`);
  }
  return m;
}

/** What the logs say of a certificate: subject, SANs, serial, expiry and SHA-256 fingerprint. */
export function describeCertificate(pem: Buffer): Record<string, string> {
  const c = new X509Certificate(pem);
  return {
    subject: c.subject.replace(/\n/g, ", "),
    ...(c.subjectAltName !== undefined && { san: c.subjectAltName }),
    serial: c.serialNumber,
    notAfter: c.validTo,
    fingerprint256: c.fingerprint256,
  };
}
