import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { resolve } from "node:path";

/** Whether this machine has the openssl command the certificate tests need. */
export const opensslAvailable: boolean = ((): boolean => {
  try {
    execFileSync("openssl", ["version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
})();

const EC = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];

export interface CertOptions {
  /** The signing CA's name, as given to `ca`. */
  readonly ca: string;
  /** The subject alternative names, in openssl's `subjectAltName` syntax (`IP:127.0.0.1,DNS:localhost`). */
  readonly san: string;
  /** The subject's common name; the certificate's name when absent. */
  readonly cn?: string;
  /** More lines for the certificate's extensions file (`extendedKeyUsage=serverAuth,clientAuth`). */
  readonly extensions?: string;
}

export interface OpensslCerts {
  /** A self-signed CA: `<name>.key` and `<name>.pem`. */
  ca(name: string, cn?: string): void;
  /** A key and a certificate signed by a CA made here: `<name>.key` and `<name>.pem`. */
  cert(name: string, options: CertOptions): void;
}

/**
 * Keys and certificates made by openssl at test time in one directory (EC P-256, valid a day). A name is a
 * path relative to the directory, or absolute.
 */
export function opensslCerts(dir: () => string): OpensslCerts {
  const at = (name: string): string => resolve(dir(), name);
  const run = (...args: string[]): void =>
    void execFileSync("openssl", args, { cwd: dir(), stdio: "ignore" });
  return {
    ca(name, cn = name) {
      run(
        "req",
        "-x509",
        ...EC,
        "-keyout",
        at(`${name}.key`),
        "-out",
        at(`${name}.pem`),
        "-days",
        "1",
        "-subj",
        `/CN=${cn}`,
      );
    },
    cert(name, { ca, san, cn = name, extensions = "" }) {
      writeFileSync(at(`${name}.cnf`), `subjectAltName=${san}\n${extensions}`);
      run("req", ...EC, "-keyout", at(`${name}.key`), "-out", at(`${name}.csr`), "-subj", `/CN=${cn}`);
      run(
        ...["x509", "-req", "-in", at(`${name}.csr`), "-CA", at(`${ca}.pem`), "-CAkey", at(`${ca}.key`)],
        ...["-CAcreateserial", "-out", at(`${name}.pem`), "-days", "1", "-extfile", at(`${name}.cnf`)],
      );
    },
  };
}
