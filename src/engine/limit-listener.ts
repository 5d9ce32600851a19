/**
 * Told that a limit triggered: the config key that set it (`horizonProbe.maxPerWindow`,
 * `maxConnections`, …) and what it refused. Every limit reports through this one signature, so a
 * node can rate-limit them all in one place (`LimitLog`, src/mesh/limit-log.ts).
 */
export type LimitListener = (limit: string, fields: Record<string, unknown>) => void;
