/**
 * Tests that need a real backend (Prometheus, python3-grpcio, openssl, Docker) skip with a reason
 * on a machine without it — and fail instead when TAILSWARM_REQUIRE_BACKENDS=1 (set by .ci/run),
 * so that CI can never pass by skipping them.
 *
 * @example
 * const have = requireBackend("prometheus", existsSync("/usr/bin/prometheus"), "install Debian's prometheus");
 * describe.skipIf(!have)("Prometheus scrapes a node", () => { ... });
 */
export function requireBackend(name: string, available: boolean, hint: string): boolean {
  if (available) return true;
  const message = `backend '${name}' is not available: ${hint}`;
  if (process.env.TAILSWARM_REQUIRE_BACKENDS === "1") {
    throw new Error(`${message} (TAILSWARM_REQUIRE_BACKENDS=1: required here)`);
  }
  console.warn(`skipping: ${message}`);
  return false;
}
