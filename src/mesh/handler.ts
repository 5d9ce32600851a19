/**
 * The handler API a node serves branches with: one `TaskHandler` per task kind, kept in a
 * `HandlerRegistry`. The node loads handlers (peers/ ships `vote`, `synthetic`, `echo`; users add
 * their own from a module path) and gives the registry to `createSwarmServer`.
 */
import type { Context } from "@opentelemetry/api";
import type { Task } from "../engine/transport.js";
import { invalid } from "../errors.js";

/** What a handler knows about the branch it serves. */
export interface HandlerContext {
  /**
   * Aborts when the work is no longer wanted: the coordinator abandoned the branch, the deadline
   * passed, the caller cancelled, or the node is shutting down. Stop promptly: the time spent
   * until the handler settles is reported to the coordinator as lost work.
   */
  readonly signal: AbortSignal;
  /** Absolute deadline, epoch ms (already minus the node's reserve). */
  readonly deadline: number;
  readonly fanoutId: string;
  /** Hops already taken (0 for a branch issued by the first coordinator). */
  readonly hop: number;
  /** Node id of the coordinator that issued the branch. */
  readonly origin: string;
  /**
   * The branch's trace context (its server span). The handler runs inside it, and with the daemon's
   * default context manager it stays active across the handler's awaits; under
   * `telemetry.contextManager: sync` it does not, so a handler that calls other nodes after awaiting
   * wraps the call in `context.with(ctx.traceContext, ...)` to keep one trace.
   * Absent where no server made one.
   */
  readonly traceContext?: Context;
}

/**
 * Serves one task kind. Return any JSON-serialisable answer; throw a `TailswarmError` with code
 * `INVALID_ARGUMENT` for a bad payload (the caller gets INVALID_ARGUMENT), anything else becomes
 * an INTERNAL status with the error's message.
 *
 * @example
 * const echo: TaskHandler = {
 *   kind: "echo",
 *   async handle(task, { signal }) {
 *     signal.throwIfAborted();
 *     return task.payload;
 *   },
 * };
 */
export interface TaskHandler {
  readonly kind: string;
  handle(task: Task, ctx: HandlerContext): Promise<unknown>;
}

/** Handlers by task kind. */
export class HandlerRegistry {
  readonly #handlers = new Map<string, TaskHandler>();

  constructor(handlers: Iterable<TaskHandler> = []) {
    for (const h of handlers) this.register(h);
  }

  /** Adds a handler; a second handler for the same kind is a configuration error. */
  register(handler: TaskHandler): this {
    if (typeof handler.kind !== "string" || handler.kind.length === 0) {
      throw invalid("handler.kind", handler.kind, "a non-empty string", { code: "INVALID_CONFIG" });
    }
    if (typeof handler.handle !== "function") {
      throw invalid(`handler.handle (kind ${handler.kind})`, typeof handler.handle, "a function", {
        code: "INVALID_CONFIG",
      });
    }
    if (this.#handlers.has(handler.kind)) {
      throw invalid("handler.kind", handler.kind, "a kind no other handler serves (one handler per kind)", {
        code: "INVALID_CONFIG",
      });
    }
    this.#handlers.set(handler.kind, handler);
    return this;
  }

  get(kind: string): TaskHandler | undefined {
    return this.#handlers.get(kind);
  }

  /** Known kinds, sorted (used in "unknown kind" messages and in `State`). */
  kinds(): string[] {
    return [...this.#handlers.keys()].sort();
  }
}
