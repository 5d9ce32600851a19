/** The one place where library error codes meet gRPC status codes. */
import { Metadata, status as Status } from "@grpc/grpc-js";
import type { ServiceError } from "@grpc/grpc-js";
import { TailswarmError } from "../errors.js";
import type { TailswarmErrorCode } from "../errors.js";

const toGrpc: Record<TailswarmErrorCode, Status> = {
  SPECULATION_BUDGET_VIOLATION: Status.FAILED_PRECONDITION,
  INVALID_ARGUMENT: Status.INVALID_ARGUMENT,
  INVALID_CONFIG: Status.FAILED_PRECONDITION,
  DEADLINE_EXCEEDED: Status.DEADLINE_EXCEEDED,
  PEER_UNAVAILABLE: Status.UNAVAILABLE,
  UNKNOWN_TASK_KIND: Status.NOT_FOUND,
  ABORTED: Status.CANCELLED,
  RESOURCE_EXHAUSTED: Status.RESOURCE_EXHAUSTED,
  INTERNAL: Status.INTERNAL,
};

/** gRPC status for a library error code. */
export function grpcStatusOf(code: TailswarmErrorCode): Status {
  return toGrpc[code];
}

/** The name of a gRPC status code (`UNAVAILABLE`), used as the `code` of failed branch results. */
export function statusName(code: number): string {
  return (Status as unknown as Record<number, string>)[code] ?? `STATUS_${code}`;
}

/** A `ServiceError`-shaped object for a server callback, from any thrown value. */
export function toServiceError(error: unknown, context: string): Partial<ServiceError> {
  const metadata = new Metadata();
  if (TailswarmError.is(error) && error.code in toGrpc) {
    metadata.set("tailswarm-error-code", error.code);
    return { code: toGrpc[error.code], details: error.message, metadata };
  }
  const message = error instanceof Error ? error.message : String(error);
  return { code: Status.INTERNAL, details: `${context}: ${message}`, metadata };
}

/** A `ServiceError`-shaped object with an explicit status. */
export function serviceError(code: Status, details: string): Partial<ServiceError> {
  return { code, details, metadata: new Metadata() };
}
