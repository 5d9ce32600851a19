/** `static:///a:1,b:2` or a bare `host:port`: a fixed list of seed addresses. */
import { registerSource, splitHostPort } from "./source.js";
import type { MembershipSource, ParsedTarget } from "./source.js";

export function staticSource(target: ParsedTarget): MembershipSource {
  const addresses = target.path
    .split(",")
    .map((a) => a.trim())
    .filter((a) => a !== "");
  for (const a of addresses) splitHostPort(a, target.raw);
  return { target: target.raw, resolve: async () => [...addresses] };
}

registerSource("static", staticSource);
