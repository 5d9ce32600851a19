/**
 * The batch span processor's settings from the specification's OTEL_BSP_* variables. SDK 3 no longer
 * reads them itself; the node documents them, so it reads them here, and a bad value is an error that
 * names it rather than a silent default.
 */
import type { BatchSpanProcessorOptions } from "@opentelemetry/sdk-trace";
import { invalid } from "../../errors.js";

type Env = Readonly<Record<string, string | undefined>>;

/** Variable → option; every one a positive integer (ms or spans). Unset: the SDK's default. */
const VARIABLES = {
  OTEL_BSP_SCHEDULE_DELAY: "scheduledDelayMillis",
  OTEL_BSP_EXPORT_TIMEOUT: "exportTimeoutMillis",
  OTEL_BSP_MAX_QUEUE_SIZE: "maxQueueSize",
  OTEL_BSP_MAX_EXPORT_BATCH_SIZE: "maxExportBatchSize",
} as const;

type BatchSettings = Partial<Omit<BatchSpanProcessorOptions, "exporter">>;

/**
 * @example
 * batchOptions({ OTEL_BSP_SCHEDULE_DELAY: "100" }); // { scheduledDelayMillis: 100 }
 */
export function batchOptions(env: Env): BatchSettings {
  const out: Record<string, number> = {};
  for (const [variable, option] of Object.entries(VARIABLES)) {
    const raw = env[variable]?.trim();
    if (raw === undefined || raw === "") continue;
    const n = Number(raw);
    if (!Number.isSafeInteger(n) || n <= 0) {
      throw invalid(variable, raw, "a positive integer", { source: "env", code: "INVALID_CONFIG" });
    }
    out[option] = n;
  }
  const settings = out as BatchSettings;
  const queue = settings.maxQueueSize ?? 2048;
  if (settings.maxExportBatchSize !== undefined && settings.maxExportBatchSize > queue) {
    throw invalid(
      "OTEL_BSP_MAX_EXPORT_BATCH_SIZE",
      env["OTEL_BSP_MAX_EXPORT_BATCH_SIZE"],
      `at most OTEL_BSP_MAX_QUEUE_SIZE (${queue})`,
      {
        source: "env",
        code: "INVALID_CONFIG",
      },
    );
  }
  return settings;
}
