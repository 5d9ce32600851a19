import { readFileSync } from "node:fs";

/**
 * tailswarm's own version, from its package.json (`service.version` on the node's resource). The file
 * sits three directories above this module both in src/ and in dist/. Undefined when it cannot be
 * read (a bundler that left it behind): the resource then goes without a version rather than with a
 * wrong one.
 */
export function packageVersion(): string | undefined {
  try {
    const pkg = JSON.parse(readFileSync(new URL("../../../package.json", import.meta.url), "utf8")) as {
      name?: unknown;
      version?: unknown;
    };
    return pkg.name === "tailswarm" && typeof pkg.version === "string" ? pkg.version : undefined;
  } catch {
    return undefined;
  }
}
