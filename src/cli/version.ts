/**
 * tailswarm's version, from its package.json (two directories above this module in src/ and in
 * dist/): what `--version` prints and what a node reports in its status. "unknown" when the file
 * cannot be read (a bundler that left it behind), never a made-up number.
 */
import { readFileSync } from "node:fs";

let cached: string | undefined;

export function cliVersion(): string {
  if (cached !== undefined) return cached;
  try {
    const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as {
      name?: unknown;
      version?: unknown;
    };
    cached = pkg.name === "tailswarm" && typeof pkg.version === "string" ? pkg.version : "unknown";
  } catch {
    cached = "unknown";
  }
  return cached;
}
