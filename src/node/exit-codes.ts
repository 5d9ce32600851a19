/**
 * Exit codes of `tailswarm node` and the other verbs (docs/configuration.md lists them).
 * sysexits.h values where one fits; 128 + signal number when a second signal forces the exit.
 */
export const ExitCode = {
  /** Clean exit, including a graceful shutdown after SIGTERM/SIGINT (drained, or grace expired). */
  OK: 0,
  /** Runtime failure: cannot bind, a peer/handler crash, an unexpected error; or a failed RPC in a client verb. */
  FAILURE: 1,
  /** Usage: unknown verb or flag, missing argument. */
  USAGE: 2,
  /** Configuration: a bad key, value, file or handler module (EX_CONFIG). */
  CONFIG: 78,
  /** A second SIGINT during the drain forced the exit (128 + 2). */
  FORCED_SIGINT: 130,
  /** A second SIGTERM during the drain forced the exit (128 + 15). */
  FORCED_SIGTERM: 143,
} as const;

export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode];
