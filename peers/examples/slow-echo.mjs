/* global setTimeout, clearTimeout */
// A handler exported as a plain object (no options): waits `payload.delayMs`, then echoes the payload.
// It stops as soon as ctx.signal aborts, so abandoned work is cut short.

export const handler = {
  handle(task, { signal }) {
    const delayMs = Number(task.payload?.delayMs ?? 0);
    return new Promise((resolve, reject) => {
      if (signal.aborted) return reject(signal.reason);
      const timer = setTimeout(() => resolve(task.payload), delayMs);
      signal.addEventListener(
        "abort",
        () => {
          clearTimeout(timer);
          reject(signal.reason);
        },
        { once: true },
      );
    });
  },
};
