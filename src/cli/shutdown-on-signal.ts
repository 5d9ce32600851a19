/**
 * The daemons' shutdown on signals: the first SIGTERM/SIGINT starts the graceful stop (drain), a
 * second one forces the exit. Resolves with the exit code: 0 after a graceful stop, 1 when the stop
 * failed, 130/143 when a second SIGINT/SIGTERM forced it (src/node/exit-codes.ts).
 *
 * @example
 * const code = await shutdownOnSignal({ stop: () => node.stop(), force: () => node.forceStop(), log });
 */
import { ExitCode } from "../node/exit-codes.js";
import type { Logger } from "../node/logger.js";

export interface ShutdownTarget {
  /** The graceful stop (drain, then close). */
  stop(): Promise<unknown>;
  /** The immediate stop, on a second signal. */
  force(): void;
  readonly log: Logger;
  /** Logged with the first signal (e.g. the drain grace). */
  readonly fields?: Record<string, unknown>;
}

export function shutdownOnSignal(target: ShutdownTarget): Promise<number> {
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
