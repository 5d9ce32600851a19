/**
 * The routing task of a context request: the payload `{ requestClass, stage?, context? }` that the
 * `context` worker serves names the commodity `(requestClass, stage, context)` and the memory object it
 * could reuse, `contextSignature(requestClass, context)` — the same hash on the peer and the coordinator.
 */
import { commodity } from "./commodity.js";
import { signatureOf } from "./signature.js";
import type { RouteTask } from "./types.js";

/** Signature of a context's memory object. */
export function contextSignature(requestClass: string, context: string): number {
  return signatureOf(`${requestClass}:${context}`);
}

/**
 * The RouteTask of a payload; a payload without a request class is commodity `default/0` with no memory.
 *
 * @example
 * contextRouteTask({ requestClass: "rag", context: "c17" }); // rag/0, signature of "rag:c17"
 */
export function contextRouteTask(payload: unknown, pressure = 0): RouteTask {
  const p = (typeof payload === "object" && payload !== null ? payload : {}) as Record<string, unknown>;
  const requestClass =
    typeof p.requestClass === "string" && p.requestClass !== "" ? p.requestClass : "default";
  const stage = typeof p.stage === "number" && Number.isInteger(p.stage) && p.stage >= 0 ? p.stage : 0;
  const context = typeof p.context === "string" ? p.context : "";
  return {
    commodity: commodity(requestClass, stage, context),
    ...(context === "" ? {} : { signature: contextSignature(requestClass, context) }),
    pressure,
  };
}
