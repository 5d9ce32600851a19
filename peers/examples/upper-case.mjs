// An example user handler for `tailswarm node`: plain ESM JavaScript, no build step.
//
//   handlers:
//     - kind: upper
//       use: ./peers/examples/upper-case.mjs
//       options: { suffix: "!" }
//
// The node calls createHandler(options, env) once at start, then handle(task, ctx) per branch.
// ctx.signal aborts when the branch is abandoned, the deadline passes or the node shuts down;
// ctx.deadline is the absolute deadline (epoch ms). Throw an error with code "INVALID_ARGUMENT"
// for a bad payload.

export function createHandler(options = {}, env) {
  const suffix = typeof options.suffix === "string" ? options.suffix : "";
  return {
    async handle(task, { signal }) {
      signal.throwIfAborted();
      const text = task.payload?.text;
      if (typeof text !== "string") {
        const err = new Error(`payload.text: got ${JSON.stringify(text)}, expected a string`);
        err.code = "INVALID_ARGUMENT";
        throw err;
      }
      return { text: text.toUpperCase() + suffix, node: env.nodeId };
    },
  };
}
