/**
 * `dns:///name:port`: every A (or AAAA) record of `name` is a peer at `port`, re-resolved every
 * `refreshMs` — a Kubernetes headless service lists one record per ready pod. Uses the system
 * resolver (getaddrinfo), so /etc/hosts names work too.
 */
import { lookup } from "node:dns/promises";
import { registerSource, splitHostPort } from "./source.js";
import type { MembershipSource, ParsedTarget } from "./source.js";

export function dnsSource(target: ParsedTarget, options: { refreshMs: number }): MembershipSource {
  const { host, port } = splitHostPort(target.path, target.raw);
  return {
    target: target.raw,
    refreshMs: options.refreshMs,
    async resolve() {
      const records = await lookup(host.replace(/^\[|\]$/g, ""), { all: true, verbatim: true });
      const out = new Set<string>();
      for (const r of records) out.add(r.family === 6 ? `[${r.address}]:${port}` : `${r.address}:${port}`);
      return [...out].sort();
    },
  };
}

registerSource("dns", dnsSource);
