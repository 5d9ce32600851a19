/**
 * A coordinator's abandon ledgers: one per speculation policy, so each policy decides with the cost of
 * its own cuts. A node serves calls that name different policies (a caller's `policy`, the testbed's
 * comparison); with one shared ledger, naive-p50's abandons would raise the cost `p99-boundary` weighs
 * and one policy's results would rest on another's losses. The latency estimates stay shared: they
 * describe the peers, not the policy.
 *
 * A policy's ledger is made the first time a fan-out decides under it, with the same options for all,
 * so there are at most `POLICY_NAMES.length` of them.
 */
import type { PolicyName } from "../policy/types.js";
import { POLICY_NAMES } from "../policy/types.js";
import { AbandonLedger, abandonLedgerOptions } from "./abandon-ledger.js";
import type { AbandonLedgerOptions } from "./abandon-ledger.js";

export class PolicyLedgers {
  readonly options: Readonly<Required<AbandonLedgerOptions>>;
  readonly #ledgers = new Map<PolicyName, AbandonLedger>();

  /** @throws TailswarmError INVALID_ARGUMENT naming an unknown option or a bad value. */
  constructor(options: AbandonLedgerOptions = {}) {
    this.options = abandonLedgerOptions(options);
  }

  /** The policy's own ledger, made on first use. */
  of(policy: PolicyName): AbandonLedger {
    let ledger = this.#ledgers.get(policy);
    if (ledger === undefined) {
      ledger = new AbandonLedger(this.options);
      this.#ledgers.set(policy, ledger);
    }
    return ledger;
  }

  /** The ledgers made so far, in `POLICY_NAMES` order. */
  made(): Array<[PolicyName, AbandonLedger]> {
    return POLICY_NAMES.flatMap((p) => {
      const ledger = this.#ledgers.get(p);
      return ledger === undefined ? [] : [[p, ledger] as [PolicyName, AbandonLedger]];
    });
  }
}
