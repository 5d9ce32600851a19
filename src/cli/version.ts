/**
 * What `--version` prints and what a node reports in its status: the package's version, read where
 * the telemetry resource reads it (src/telemetry/sdk/package-version.ts, which imports no SDK);
 * "unknown" when package.json cannot be read, never a made-up number.
 */
import { packageVersion } from "../telemetry/sdk/package-version.js";

export function cliVersion(): string {
  return packageVersion() ?? "unknown";
}
