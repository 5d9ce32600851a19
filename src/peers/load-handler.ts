/**
 * Resolves a handler spec — a shipped name or the path of a user's ESM module — into a TaskHandler.
 *
 * A user module may export, in order of preference:
 * - `createHandler(options, env)` returning a handler (or a promise of one);
 * - `handler`, or a default export, that is a handler object (`{ handle }`, `kind` optional) or a
 *   plain `handle(task, ctx)` function;
 * - a named `handle(task, ctx)` function.
 * The config entry's `kind` names the task kind served.
 *
 * @example
 * const h = await loadHandler({ kind: "upper", use: "./peers/examples/upper-case.mjs" }, {
 *   nodeId: "n1", region: "eu", baseDir: process.cwd(), path: "handlers[0]",
 * });
 */
import { isAbsolute, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { systemClock } from "../clock/clock.js";
import type { Clock } from "../clock/clock.js";
import { invalid } from "../errors.js";
import type { TaskHandler } from "../mesh/handler.js";
import { createContextWorkerHandler } from "./context-worker.js";
import { createEchoHandler } from "./echo.js";
import type { HandlerFactory, HandlerSpec } from "./handler.js";
import { createSyntheticHandler } from "./synthetic.js";
import { createVoteHandler } from "./vote.js";

/** The handlers shipped with tailswarm, by name. */
export const shippedHandlers: Readonly<Record<string, HandlerFactory>> = {
  context: createContextWorkerHandler,
  echo: createEchoHandler,
  synthetic: createSyntheticHandler,
  vote: createVoteHandler,
};

export interface LoadContext {
  readonly nodeId: string;
  readonly region: string;
  /** Relative module paths resolve against this directory (the config file's, or the cwd). */
  readonly baseDir: string;
  /** Dotted config path of the entry (`handlers[2]`), for error messages. */
  readonly path: string;
  readonly clock?: Clock;
}

/** True when `use` names a module rather than a shipped handler. */
export function isModulePath(use: string): boolean {
  return use.startsWith(".") || isAbsolute(use) || use.startsWith("file:") || /\.(m?js|cjs)$/.test(use);
}

function toHandler(value: unknown, kind: string): TaskHandler | undefined {
  if (typeof value === "function") {
    const handle = value as TaskHandler["handle"];
    return { kind, handle: (task, ctx) => handle(task, ctx) };
  }
  if (typeof value === "object" && value !== null && typeof (value as TaskHandler).handle === "function") {
    const h = value as TaskHandler;
    return { kind, handle: (task, ctx) => h.handle(task, ctx) };
  }
  return undefined;
}

async function importModule(use: string, ctx: LoadContext): Promise<Record<string, unknown>> {
  const url = use.startsWith("file:") ? use : pathToFileURL(resolve(ctx.baseDir, use)).href;
  try {
    return (await import(url)) as Record<string, unknown>;
  } catch (err) {
    const e = err as { code?: unknown; message?: unknown };
    const why = `${typeof e.code === "string" ? `${e.code}: ` : ""}${String(e.message ?? err)}`;
    throw invalid(
      `${ctx.path}.use`,
      use,
      `a shipped handler (${Object.keys(shippedHandlers).join(", ")}) or the path of an ESM module that loads (${url}: ${why})`,
      { code: "INVALID_CONFIG", cause: err },
    );
  }
}

export async function loadHandler(spec: HandlerSpec, ctx: LoadContext): Promise<TaskHandler> {
  const optionsPath = `${ctx.path}.options`;
  const load = (inner: HandlerSpec, path: string): Promise<TaskHandler> =>
    loadHandler(inner, { ...ctx, path: path.replace(/\.options$/, "") });
  const env = {
    nodeId: ctx.nodeId,
    region: ctx.region,
    kind: spec.kind,
    path: optionsPath,
    clock: ctx.clock ?? systemClock,
    load,
  };
  const shipped = shippedHandlers[spec.use];
  if (shipped !== undefined) return shipped(spec.options, env);
  if (!isModulePath(spec.use)) {
    throw invalid(
      `${ctx.path}.use`,
      spec.use,
      `a shipped handler (${Object.keys(shippedHandlers).join(", ")}) or a module path (./x.mjs, /abs/x.mjs, file:...)`,
      { code: "INVALID_CONFIG" },
    );
  }
  const mod = await importModule(spec.use, ctx);
  let handler: TaskHandler | undefined;
  if (typeof mod.createHandler === "function") {
    const made: unknown = await (mod.createHandler as HandlerFactory)(spec.options, env);
    handler = toHandler(made, spec.kind);
    if (handler === undefined) {
      throw invalid(
        `${ctx.path}.use`,
        spec.use,
        `a module whose createHandler() returns an object with handle(task, ctx) (it returned ${typeof made})`,
        { code: "INVALID_CONFIG" },
      );
    }
    return handler;
  }
  handler =
    toHandler(mod.handler, spec.kind) ??
    toHandler(mod.default, spec.kind) ??
    toHandler(mod.handle, spec.kind);
  if (handler === undefined) {
    throw invalid(
      `${ctx.path}.use`,
      spec.use,
      `a module exporting createHandler(options, env), handler, a default handler or handle(task, ctx) (it exports ${Object.keys(mod).join(", ") || "nothing"})`,
      { code: "INVALID_CONFIG" },
    );
  }
  if (spec.options !== undefined) {
    throw invalid(
      optionsPath,
      spec.options,
      `no options: module ${JSON.stringify(spec.use)} takes none (it does not export createHandler)`,
      { code: "INVALID_CONFIG" },
    );
  }
  return handler;
}
