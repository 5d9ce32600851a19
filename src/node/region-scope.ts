/**
 * Which live peers this node's fan-outs may go to (`fanoutRegions`): every live peer when the list
 * is empty, else those whose region — each peer tells its own through `State`, learned by the
 * membership — is listed. A peer whose region is not known yet is left out while the list is set:
 * a fan-out must not cross a boundary it was told to keep.
 */
import type { Membership } from "../mesh/membership/membership.js";

export function regionScoped(
  membership: Pick<Membership, "live" | "peers">,
  regions: readonly string[],
): Pick<Membership, "live"> {
  if (regions.length === 0) return membership;
  const allowed = new Set(regions);
  return {
    live() {
      const inScope = new Set<string>();
      for (const p of membership.peers()) if (p.up && p.id !== "" && allowed.has(p.region)) inScope.add(p.id);
      return membership.live().filter((id) => inScope.has(id));
    },
  };
}
