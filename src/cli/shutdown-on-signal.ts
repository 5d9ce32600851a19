/**
 * The daemons' shutdown on signals: the first SIGTERM/SIGINT starts the graceful stop (drain), a
 * second one forces the exit. Resolves with the exit code: 0 after a graceful stop, 1 when the stop
 * failed, 130/143 when a second SIGINT/SIGTERM forced it (src/node/exit-codes.ts).
 *
 * @example
 * const code = await serveUntilSignal(startNode().then((n) => ({ stop: () => n.stop(), force: () => n.forceStop() })), { log });
 */
import { ExitCode } from "../node/exit-codes.js";
import type { Logger } from "../node/logger.js";

/** What a signal stops. */
export interface Stoppable {
  /** The graceful stop (drain, then close). */
  stop(): Promise<unknown>;
  /** The immediate stop, on a second signal. */
  force(): void;
}

interface ShutdownTarget extends Stoppable {
  readonly log: Logger;
  /** Logged with the first signal (e.g. the drain grace). */
  readonly fields?: Record<string, unknown>;
}

function shutdownOnSignal(target: ShutdownTarget): Promise<number> {
  return new Promise<number>((resolve) => {
    let signalled: NodeJS.Signals | undefined;
    const onSignal = (signal: NodeJS.Signals): void => {
      if (signalled !== undefined) {
        target.log.warn("second signal: forcing exit", { signal });
        target.force();
        resolve(signal === "SIGINT" ? ExitCode.FORCED_SIGINT : ExitCode.FORCED_SIGTERM);
        return;
      }
      signalled = signal;
      target.log.info("shutdown requested", { signal, ...target.fields });
      target.stop().then(
        () => resolve(ExitCode.OK),
        (err: unknown) => {
          target.log.error("shutdown failed", { error: err });
          resolve(ExitCode.FAILURE);
        },
      );
    };
    process.on("SIGTERM", onSignal);
    process.on("SIGINT", onSignal);
  });
}

/**
 * `shutdownOnSignal` for a daemon still starting: signals are taken from the call on, so one that
 * arrives while it starts (after a node's "listening" line, say) stops it once it is up rather than
 * killing it undrained; a second one exits without waiting for the start. Resolves with the exit code;
 * rejects with the start's error when it fails.
 */
export async function serveUntilSignal(
  starting: Promise<Stoppable>,
  options: Pick<ShutdownTarget, "log" | "fields">,
): Promise<number> {
  const stopped = shutdownOnSignal({
    // a failed start is reported by the caller (the rejection below), not again as a failed stop
    stop: () =>
      starting.then(
        (t) => t.stop(),
        () => undefined,
      ),
    force: () =>
      void starting.then(
        (t) => t.force(),
        () => undefined,
      ),
    ...options,
  });
  await Promise.race([starting, stopped]);
  return stopped;
}
