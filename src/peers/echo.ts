/** The `echo` workload: answers with the task's payload. Options: none. */
import type { HandlerFactory } from "./handler.js";
import { optionsObject } from "./options.js";

export const createEchoHandler: HandlerFactory = (options, env) => {
  optionsObject(options, env.path, []);
  return {
    kind: env.kind,
    async handle(task, { signal }) {
      signal.throwIfAborted();
      return task.payload;
    },
  };
};
