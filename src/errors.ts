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
