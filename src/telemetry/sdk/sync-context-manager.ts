import { ROOT_CONTEXT } from "@opentelemetry/api";
import type { Context, ContextManager } from "@opentelemetry/api";

/**
 * A context manager without async hooks: `with(ctx, fn)` makes `ctx` active while `fn` runs
 * synchronously, and nothing carries it across an `await`, a timer or a callback.
 *
 * Why: the least a context can cost. tailswarm's own spans need no more: a fan-out span opens
 * synchronously under the incoming RPC's context, branch spans name their parent explicitly, and
 * `traceparent` is injected inside the synchronous `context.with` of each branch. What it does not do:
 * carry the context into code that runs later — a handler that awaits something and then calls another
 * node starts a new trace unless it passes `ctx.traceContext` on itself, and log lines after an await
 * carry no trace id. The node's opt-in (`telemetry.contextManager: sync`); the default is the SDK's
 * AsyncLocalStorage manager. docs/telemetry.md compares the two.
 *
 * @example
 * context.setGlobalContextManager(new SyncContextManager().enable());
 */
export class SyncContextManager implements ContextManager {
  #active: Context = ROOT_CONTEXT;

  active(): Context {
    return this.#active;
  }

  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
    ctx: Context,
    fn: F,
    thisArg?: ThisParameterType<F>,
    ...args: A
  ): ReturnType<F> {
    const previous = this.#active;
    this.#active = ctx;
    try {
      return fn.call(thisArg, ...args);
    } finally {
      this.#active = previous;
    }
  }

  bind<T>(ctx: Context, target: T): T {
    if (typeof target !== "function") return target;
    // eslint-disable-next-line @typescript-eslint/no-this-alias
    const manager = this;
    const fn = target as unknown as (...args: unknown[]) => unknown;
    return function (this: unknown, ...args: unknown[]) {
      return manager.with(ctx, () => fn.apply(this, args));
    } as unknown as T;
  }

  enable(): this {
    return this;
  }

  disable(): this {
    this.#active = ROOT_CONTEXT;
    return this;
  }
}
