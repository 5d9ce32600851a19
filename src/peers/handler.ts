/**
 * The peer workload API. A node serves each task kind with a `TaskHandler` (src/mesh/handler.ts):
 * `handle(task, { signal, deadline, ... })` returns a JSON-serialisable answer. Handlers come from a
 * shipped name (`echo`, `vote`, `synthetic`) or a user's ESM module; a factory builds one from the
 * `options` of its config entry and the node's environment.
 *
 * @example
 * // my-handler.mjs — loaded with `handlers: [{ kind: "upper", use: "./my-handler.mjs" }]`
 * export function createHandler(options, env) {
 *   return {
 *     async handle(task, { signal }) {
 *       signal.throwIfAborted();
 *       return { text: String(task.payload.text).toUpperCase(), node: env.nodeId };
 *     },
 *   };
 * }
 */
import type { Clock } from "../clock/clock.js";
import type { TaskHandler } from "../mesh/handler.js";

/** What a handler factory knows about the node that serves it. */
export interface HandlerEnv {
  readonly nodeId: string;
  readonly region: string;
  /** The task kind this handler will serve (from the config entry). */
  readonly kind: string;
  /** Dotted config path of the entry's options, for error messages (`handlers[1].options`). */
  readonly path: string;
  /** Time source; the system clock unless a test or the simulated testbed supplies one. */
  readonly clock: Clock;
  /** Resolves a nested handler spec (used by `synthetic` to wrap another handler). */
  readonly load: (spec: HandlerSpec, path: string) => Promise<TaskHandler>;
}

/** One config entry: the task kind, what serves it (shipped name or module path), its options. */
export interface HandlerSpec {
  readonly kind: string;
  readonly use: string;
  readonly options?: unknown;
}

/** Builds a handler from its options; throws TailswarmError("INVALID_CONFIG") naming the option. */
export type HandlerFactory = (options: unknown, env: HandlerEnv) => TaskHandler | Promise<TaskHandler>;
