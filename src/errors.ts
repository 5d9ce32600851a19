/**
 * One error type for the whole library: a stable string `code` that programs switch on, a message
 * that names the field, the value and what was expected, and the underlying `cause` when there is one.
 * gRPC status codes are chosen only at the network boundary (src/mesh), from `code`.
 */
export type TailswarmErrorCode =
  | "SPECULATION_BUDGET_VIOLATION"
  | "INVALID_ARGUMENT"
  | "INVALID_CONFIG"
  | "DEADLINE_EXCEEDED"
  | "PEER_UNAVAILABLE"
  | "UNKNOWN_TASK_KIND"
  | "ABORTED"
  | "RESOURCE_EXHAUSTED"
  | "INTERNAL";

export class TailswarmError extends Error {
  readonly code: TailswarmErrorCode;

  constructor(code: TailswarmErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.name = "TailswarmError";
  }

  /** `instanceof` across copies of the package, like connect-es's `ConnectError.from`. */
  static is(value: unknown, code?: TailswarmErrorCode): value is TailswarmError {
    return (
      value instanceof Error &&
      typeof (value as { code?: unknown }).code === "string" &&
      (code === undefined || (value as TailswarmError).code === code)
    );
  }
}

/** The most characters of a value an error message repeats; a longer value is cut and its length given. */
export const MAX_ECHO_CHARS = 200;

/**
 * The most characters of a whole error message that leaves the node (a gRPC status's details): several
 * echoed values with their context fit, and a reply stays far below any header-size limit.
 */
export const MAX_DETAILS_CHARS = 1_024;

/**
 * `text` cut to `max` characters (default `MAX_ECHO_CHARS`), a cut text ending `… (N chars)`: for
 * request-supplied text that a message names rather than quotes (an option key, a branch id, a kind).
 */
export function clip(text: string, max = MAX_ECHO_CHARS): string {
  return text.length > max ? `${text.slice(0, max)}… (${text.length} chars)` : text;
}

/**
 * A value as error messages show it: strings quoted, other values as JSON, `nothing` for undefined,
 * and never more than `MAX_ECHO_CHARS` characters of it (a cut value ends `… (N chars)`), so that a
 * hostile request cannot make an error reply as large as itself.
 */
export function showValue(value: unknown): string {
  let text: string;
  try {
    text =
      typeof value === "bigint" || typeof value === "symbol" || typeof value === "function"
        ? String(value)
        : (JSON.stringify(value) ?? "nothing");
  } catch {
    text = Object.prototype.toString.call(value);
  }
  if (typeof value === "number" && !Number.isFinite(value)) text = String(value);
  return clip(text);
}

/**
 * The one message style for a bad value: `field: got X (from SOURCE), expected Y`. `got` is shown
 * with `showValue` (bounded); `source` (a flag, an env variable, a file, a request) is optional.
 *
 * @example
 * expectation("probe.intervalMs", 0, "a number > 0", "env TAILSWARM_PROBE_INTERVAL_MS");
 * // 'probe.intervalMs: got 0 (from env TAILSWARM_PROBE_INTERVAL_MS), expected a number > 0'
 */
export function expectation(field: string, got: unknown, expected: string, source?: string): string {
  const from = source === undefined ? "" : ` (from ${source})`;
  return `${field}: got ${showValue(got)}${from}, expected ${expected}`;
}

/** A `TailswarmError` in the one message style (`INVALID_ARGUMENT` unless another code is given). */
export function invalid(
  field: string,
  got: unknown,
  expected: string,
  options?: { source?: string; code?: TailswarmErrorCode; cause?: unknown },
): TailswarmError {
  return new TailswarmError(
    options?.code ?? "INVALID_ARGUMENT",
    expectation(field, got, expected, options?.source),
    options?.cause === undefined ? undefined : { cause: options.cause },
  );
}
