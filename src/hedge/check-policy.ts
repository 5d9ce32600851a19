/** A hedging policy as given by a caller or a scenario, checked once: a clear error, never a silent default. */
import { invalid } from "../errors.js";
import { checkRange } from "../util/range.js";
import { HEDGE_RANGES } from "./options.js";
import { HEDGE_POLICY_NAMES } from "./types.js";
import type { HedgePolicy } from "./types.js";

/** @throws TailswarmError INVALID_ARGUMENT naming the field, its value and what was expected. */
export function checkHedgePolicy(policy: HedgePolicy, field = "hedge.policy"): HedgePolicy {
  if (typeof policy !== "object" || policy === null || !HEDGE_POLICY_NAMES.includes(policy.name)) {
    throw invalid(`${field}.name`, policy?.name, `one of ${HEDGE_POLICY_NAMES.join(", ")}`);
  }
  if (policy.name === "fixed-delay") {
    if (policy.delayMs === undefined)
      throw invalid(`${field}.delayMs`, undefined, "a delay in ms for fixed-delay");
    checkRange(`${field}.delayMs`, policy.delayMs, HEDGE_RANGES.delayMs);
  }
  if (policy.maxExtraLoad !== undefined)
    checkRange(`${field}.maxExtraLoad`, policy.maxExtraLoad, HEDGE_RANGES.maxExtraLoad);
  if (policy.checkEveryMs !== undefined)
    checkRange(`${field}.checkEveryMs`, policy.checkEveryMs, HEDGE_RANGES.checkEveryMs);
  return policy;
}
