/**
 * A named hedge policy with the knobs a deployment configured (a node's `hedge.*` keys): the one place
 * that says which policy runs under the extra-load ceiling. `gated` and `percentile` (Finagle) run
 * under `maxExtraLoad`; `fixed-delay` (gRPC A6) and `p95` (The Tail at Scale) have no ceiling, as
 * their originals do not.
 */
import { checkHedgePolicy } from "./check-policy.js";
import type { HedgeOptions } from "./options.js";
import type { HedgePolicy, HedgePolicyName } from "./types.js";

export function hedgePolicyOf(
  name: HedgePolicyName,
  o: Pick<HedgeOptions, "delayMs" | "maxExtraLoad" | "checkEveryMs">,
): HedgePolicy {
  switch (name) {
    case "gated":
      return checkHedgePolicy({ name, maxExtraLoad: o.maxExtraLoad, checkEveryMs: o.checkEveryMs });
    case "percentile":
      return checkHedgePolicy({ name, maxExtraLoad: o.maxExtraLoad });
    case "fixed-delay":
      return checkHedgePolicy({ name, delayMs: o.delayMs });
    case "p95":
    case "none":
      return checkHedgePolicy({ name });
  }
}
