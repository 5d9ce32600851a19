/**
 * A node's replicated Coordinate: "any k of these r replicas" under a hedge policy (docs/hedging.md).
 * One HedgedFanout per policy name, made on first use and kept, so each policy keeps its own
 * extra-load ceiling and its own abandon ledger (as each speculation policy does: one policy's cuts
 * never raise the cost another decides with); all of them share the node's transport and latency book
 * (a replica's latency is the same fact under any policy).
 * The policy comes from the request or `hedge.policy`, its knobs from `hedge.*`; a refusal by the
 * extra-load ceiling is reported through the node's limit log.
 */
import { HedgedFanout } from "../engine/hedge-fanout.js";
import type { HedgeBook } from "../engine/hedge-fanout.js";
import type { HedgeObserver, HedgedOutcome } from "../engine/hedge-outcome.js";
import { AbandonLedger } from "../engine/abandon-ledger.js";
import type { AbandonLedgerOptions } from "../engine/abandon-ledger.js";
import type { LimitListener } from "../engine/limit-listener.js";
import type { PeerTransport, Task } from "../engine/transport.js";
import { invalid } from "../errors.js";
import { hedgePolicyOf } from "../hedge/policy-of.js";
import { HEDGE_POLICY_NAMES } from "../hedge/types.js";
import type { HedgePolicyName } from "../hedge/types.js";
import type { ReplicatedRequest } from "../mesh/coordinate.js";
import type { NodeConfig } from "./config/types.js";

export interface NodeHedgingDeps {
  readonly config: NodeConfig["hedge"];
  readonly transport: PeerTransport;
  readonly book: HedgeBook;
  /** Options of each hedge policy's own abandon ledger (the node's `ledger.*`). */
  readonly ledger: AbandonLedgerOptions;
  readonly nodeId: string;
  /** Every replicated fan-out's decisions and ends (telemetry, flight recorder). */
  readonly observer?: HedgeObserver;
  /** A limit that triggered (`hedge.maxExtraLoad`), rate-limited by the caller. */
  readonly onLimit?: LimitListener;
}

export class NodeHedging {
  readonly #deps: NodeHedgingDeps;
  readonly #byPolicy = new Map<HedgePolicyName, HedgedFanout>();
  readonly #observer: HedgeObserver;

  constructor(deps: NodeHedgingDeps) {
    this.#deps = deps;
    const outer = deps.observer ?? {};
    this.#observer = {
      onHedgeDecision: (r) => {
        if (r.decision.reason === "extra-load-ceiling")
          deps.onLimit?.("hedge.maxExtraLoad", {
            policy: r.policy,
            maxExtraLoad: deps.config.maxExtraLoad,
            windowMs: deps.config.ceilingWindowMs,
          });
        outer.onHedgeDecision?.(r);
      },
      onHedgedFanoutEnd: (o) => outer.onHedgedFanoutEnd?.(o),
      onHedgedFanoutSettled: (id, s) => outer.onHedgedFanoutSettled?.(id, s),
    };
  }

  /**
   * Checks the request against the live peers and runs it.
   * @throws TailswarmError INVALID_ARGUMENT naming the field (`replicated.k`, `replicated.replicas[i]`, …).
   */
  run(
    task: Task,
    req: ReplicatedRequest,
    run: { readonly live: readonly string[]; readonly budgetMs: number; readonly signal: AbortSignal },
  ): Promise<HedgedOutcome> {
    const name = req.hedgePolicy ?? this.#deps.config.policy;
    if (!(HEDGE_POLICY_NAMES as readonly string[]).includes(name))
      throw invalid("replicated.hedge_policy", name, `one of ${HEDGE_POLICY_NAMES.join(", ")}`);
    const live = new Set(run.live);
    req.replicas.forEach((peer, i) => {
      if (!live.has(peer)) throw invalid(`replicated.replicas[${i}]`, peer, "a live peer id of this node");
    });
    return this.#fanout(name as HedgePolicyName).run(task, {
      replicas: req.replicas,
      k: req.k,
      budgetMs: run.budgetMs,
      signal: run.signal,
    });
  }

  #fanout(name: HedgePolicyName): HedgedFanout {
    let f = this.#byPolicy.get(name);
    if (f === undefined) {
      const c = this.#deps.config;
      f = new HedgedFanout({
        transport: this.#deps.transport,
        book: this.#deps.book,
        ledger: new AbandonLedger(this.#deps.ledger),
        policy: hedgePolicyOf(name, c),
        ceiling: { windowMs: c.ceilingWindowMs, minBackupsPerWindow: c.minBackupsPerWindow },
        observer: this.#observer,
        nodeId: this.#deps.nodeId,
      });
      this.#byPolicy.set(name, f);
    }
    return f;
  }
}
