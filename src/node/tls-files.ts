/**
 * The node's TLS files, watched: a grpc-js `CertificateProvider` over `tls.ca`, `tls.cert` and
 * `tls.key` that re-reads them every `tls.reloadIntervalMs` and hands a changed set to the server
 * and channel credentials built on it. New connections (accepted, or dialed to peers) use the new
 * set; open ones keep theirs. A changed set is taken only whole and valid (tls.ts checks it, and
 * refuses an expired certificate); otherwise the previous set stays and a warning says why, once per
 * distinct reason. A rotation is logged with the new certificate's subject, expiry and fingerprint.
 *
 * Polling, not fs.watch: Kubernetes updates a mounted Secret by swapping a symlinked directory, and
 * cert-manager's tools write files in ways that inotify on one file does not always see.
 *
 * @example
 * const files = TlsFiles.open(config.tls, { log });
 * server.bindAsync(addr, files.serverCredentials(), cb);
 * const pool = new ChannelPool({ credentials: files.channelCredentials() });
 * files.close();
 */
import { credentials, experimental } from "@grpc/grpc-js";
import type { ChannelCredentials, ServerCredentials } from "@grpc/grpc-js";
import type { TlsConfig } from "./config/types.js";
import type { Logger } from "./logger.js";
import { describeCertificate, readTlsMaterial } from "./tls.js";
import type { TlsMaterial } from "./tls.js";

type CaListener = experimental.CaCertificateUpdateListener;
type IdentityListener = experimental.IdentityCertificateUpdateListener;

export interface TlsFilesOptions {
  readonly log: Logger;
  /** Relative paths resolve against this. Default: the working directory. */
  readonly baseDir?: string;
  readonly now?: () => number;
}

export type ReloadResult = "unchanged" | "reloaded" | "refused";

const same = (a: Buffer | undefined, b: Buffer | undefined): boolean =>
  a === undefined || b === undefined ? a === b : a.equals(b);

export class TlsFiles implements experimental.CertificateProvider {
  readonly #config: TlsConfig;
  readonly #log: Logger;
  readonly #baseDir: string;
  readonly #now: () => number;
  readonly #caListeners = new Set<CaListener>();
  readonly #identityListeners = new Set<IdentityListener>();
  #material: TlsMaterial;
  #timer: NodeJS.Timeout | undefined;
  /** The reason of the last refusal, so that one bad file is logged once, not every interval. */
  #refused = "";

  private constructor(config: TlsConfig, material: TlsMaterial, options: TlsFilesOptions) {
    this.#config = config;
    this.#material = material;
    this.#log = options.log;
    this.#baseDir = options.baseDir ?? process.cwd();
    this.#now = options.now ?? Date.now;
  }

  /** Reads the files (throws INVALID_CONFIG naming the field at fault) and starts the reload timer. */
  static open(config: TlsConfig, options: TlsFilesOptions): TlsFiles {
    const files = new TlsFiles(config, readTlsMaterial(config, options.baseDir), options);
    if (config.reloadIntervalMs > 0) {
      files.#timer = setInterval(() => void files.reload(), config.reloadIntervalMs);
      files.#timer.unref();
    }
    return files;
  }

  get material(): TlsMaterial {
    return this.#material;
  }

  /** Server credentials that follow the files (client certificates required with tls.requireClientCert). */
  serverCredentials(): ServerCredentials {
    // grpc-js takes the identity provider first, then the CA provider (null: no client certificates).
    return experimental.createCertificateProviderServerCredentials(
      this,
      this.#config.ca === undefined ? null : this,
      this.#config.requireClientCert,
    );
  }

  /**
   * Credentials for calls to peers, presenting this node's certificate. They follow the files when
   * `tls.ca` is set; without it peers are verified against Node's default CA store, and the
   * certificate presented is the one read at start.
   */
  channelCredentials(): ChannelCredentials {
    if (this.#config.ca !== undefined) {
      return experimental.createCertificateProviderChannelCredentials(
        this,
        this.#config.cert === undefined ? null : this,
      );
    }
    const m = this.#material;
    return credentials.createSsl(null, m.key ?? null, m.cert ?? null);
  }

  /** Reads the files now; a changed, valid set replaces the current one (also run on the timer). */
  reload(): ReloadResult {
    let next: TlsMaterial;
    try {
      next = readTlsMaterial(this.#config, this.#baseDir, this.#now());
    } catch (err) {
      this.#refuse((err as Error).message);
      return "refused";
    }
    const prev = this.#material;
    const changed = (["ca", "cert", "key"] as const).filter((k) => !same(prev[k], next[k]));
    if (changed.length === 0) {
      this.#refused = "";
      return "unchanged";
    }
    this.#material = next;
    this.#refused = "";
    this.#log.info("tls reloaded", {
      changed: changed.map((k) => `tls.${k}`),
      ...(next.cert !== undefined && describeCertificate(next.cert)),
    });
    for (const l of this.#identityListeners) l(this.#identity());
    for (const l of this.#caListeners) l(this.#ca());
    return "reloaded";
  }

  /** Stops the reload timer (the credentials keep the last set). */
  close(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  #refuse(reason: string): void {
    if (reason === this.#refused) return;
    this.#refused = reason;
    this.#log.warn("tls reload refused; keeping the previous certificate", {
      reason,
      ...(this.#material.cert !== undefined && { serving: describeCertificate(this.#material.cert) }),
    });
  }

  #identity(): experimental.IdentityCertificateUpdate | null {
    const { cert, key } = this.#material;
    return cert === undefined || key === undefined ? null : { certificate: cert, privateKey: key };
  }

  #ca(): experimental.CaCertificateUpdate | null {
    const { ca } = this.#material;
    return ca === undefined ? null : { caCertificate: ca };
  }

  // grpc-js's CertificateProvider: a new listener gets the current set on the next tick (the
  // credentials register their own watchers only after adding the listener).
  addCaCertificateListener(listener: CaListener): void {
    this.#caListeners.add(listener);
    process.nextTick(() => {
      if (this.#caListeners.has(listener)) listener(this.#ca());
    });
  }

  removeCaCertificateListener(listener: CaListener): void {
    this.#caListeners.delete(listener);
  }

  addIdentityCertificateListener(listener: IdentityListener): void {
    this.#identityListeners.add(listener);
    process.nextTick(() => {
      if (this.#identityListeners.has(listener)) listener(this.#identity());
    });
  }

  removeIdentityCertificateListener(listener: IdentityListener): void {
    this.#identityListeners.delete(listener);
  }
}
