/** The one place where library error codes meet gRPC status codes. */
import { Metadata, status as Status } from "@grpc/grpc-js";
import type { ServiceError } from "@grpc/grpc-js";
import { clip, MAX_DETAILS_CHARS, TailswarmError } from "../errors.js";
import type { TailswarmErrorCode } from "../errors.js";
import { AdmissionRefused } from "./admission.js";
import type { Refused } from "./admission.js";

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

/** grpc-js's `status` enum read backwards: 4 → "DEADLINE_EXCEEDED". */
const NAMES = Status as unknown as Readonly<Record<number, string>>;

/**
 * The name of a gRPC status code (`UNAVAILABLE`; a code gRPC does not define as its number): the
 * `code` of failed branch results and the RPC spans' `rpc.response.status_code`.
 */
export function grpcStatusName(code: number): string {
  return NAMES[code] ?? String(code);
}

/** A status's details as they leave the node: at most `MAX_DETAILS_CHARS` (cut ones give their length). */
export function boundedDetails(details: string): string {
  return clip(details, MAX_DETAILS_CHARS);
}

/**
 * A `ServiceError`-shaped object for a server callback, from any thrown value. An admission refusal
 * carries its retry hint as the `grpc-retry-pushback-ms` trailer (gRFC A6).
 */
export function toServiceError(error: unknown, context: string): Partial<ServiceError> {
  const metadata = new Metadata();
  if (TailswarmError.is(error) && error.code in toGrpc) {
    metadata.set("tailswarm-error-code", error.code);
    if (error instanceof AdmissionRefused) return refusedStatus(error);
    return { code: toGrpc[error.code], details: boundedDetails(error.message), metadata };
  }
  const message = error instanceof Error ? error.message : String(error);
  return { code: Status.INTERNAL, details: boundedDetails(`${context}: ${message}`), metadata };
}

/** An admission refusal as it leaves the node: RESOURCE_EXHAUSTED with `grpc-retry-pushback-ms`. */
export function refusedStatus(refused: Refused): { code: Status; details: string; metadata: Metadata } {
  const metadata = new Metadata();
  metadata.set("tailswarm-error-code", "RESOURCE_EXHAUSTED");
  metadata.set("grpc-retry-pushback-ms", String(refused.retryAfterMs));
  return { code: Status.RESOURCE_EXHAUSTED, details: boundedDetails(refused.message), metadata };
}

/** A `ServiceError`-shaped object with an explicit status. */
export function serviceError(code: Status, details: string): Partial<ServiceError> {
  return { code, details: boundedDetails(details), metadata: new Metadata() };
}
