/**
 * What the OpenTelemetry Collector's Prometheus exporter writes for a metric, in its default
 * translation (`UnderscoreEscapingWithSuffixes`, the OpenTelemetry → Prometheus compatibility rules as
 * the Collector and Prometheus share them): the unit as a suffix unless a name token already is that
 * word (`s` → `_seconds`, `ms` → `_milliseconds`, `By` → `_bytes`, unknown units as they are, `{…}`
 * annotations dropped), `_total` on monotonic counters, `_ratio` on gauges of unit `1`.
 *
 * `rewriteExposition` applies it to a scrape of the node's own exporter, which writes OpenTelemetry
 * names with dots as `_`, `_total` on counters and no unit suffix, and a `# UNIT` line per family: so
 * a real Prometheus can scrape a node's series under both sets of names.
 */
const UNITS: Record<string, string> = {
  d: "days",
  h: "hours",
  min: "minutes",
  s: "seconds",
  ms: "milliseconds",
  us: "microseconds",
  ns: "nanoseconds",
  By: "bytes",
  KiBy: "kibibytes",
  MiBy: "mebibytes",
  GiBy: "gibibytes",
  m: "meters",
  V: "volts",
  A: "amperes",
  J: "joules",
  W: "watts",
  g: "grams",
  Cel: "celsius",
  Hz: "hertz",
  "1": "",
  "%": "percent",
};
const PER: Record<string, string> = {
  s: "second",
  m: "minute",
  h: "hour",
  d: "day",
  w: "week",
  mo: "month",
  y: "year",
};

export type PromType = "counter" | "gauge" | "histogram" | "summary" | "untyped";

const clean = (u: string): string =>
  u
    .replace(/[^a-zA-Z0-9:]/g, "_")
    .replace(/_+/g, "_")
    .replace(/^_/, "");

/** The Collector's name for a metric whose name tokens are `name.split(/[^a-zA-Z0-9:]+/)`. */
export function collectorName(name: string, unit: string, type: PromType): string {
  let tokens = name.split(/[^a-zA-Z0-9:]+/).filter((t) => t !== "");
  const [main = "", per] = unit.split("/", 2).map((x) => x.trim());
  let mainSuffix = main !== "" && !/[{}]/.test(main) ? clean(UNITS[main] ?? main) : "";
  let perSuffix = per !== undefined && per !== "" && !/[{}]/.test(per) ? `per_${clean(PER[per] ?? per)}` : "";
  if (tokens.includes(mainSuffix)) mainSuffix = "";
  if (perSuffix !== "" && tokens.includes(perSuffix)) perSuffix = "";
  if (mainSuffix !== "") tokens.push(mainSuffix);
  if (perSuffix !== "") tokens.push(perSuffix);
  if (type === "counter") tokens = [...tokens.filter((t) => t !== "total"), "total"];
  if (unit === "1" && type === "gauge") tokens = [...tokens.filter((t) => t !== "ratio"), "ratio"];
  return tokens.join("_");
}

/** Rewrites a text exposition from the node's exporter with the Collector's metric names. */
export function rewriteExposition(text: string): string {
  const lines = text.split("\n");
  const types = new Map<string, PromType>();
  const units = new Map<string, string>();
  for (const l of lines) {
    const m = /^# (TYPE|UNIT) (\S+) (.*)$/.exec(l);
    if (m === null) continue;
    if (m[1] === "TYPE") types.set(m[2]!, m[3] as PromType);
    else units.set(m[2]!, m[3]!);
  }
  const renamed = new Map<string, string>();
  for (const [family, type] of types) {
    const base = type === "counter" ? family.replace(/_total$/, "") : family;
    renamed.set(family, collectorName(base, units.get(family) ?? "", type));
  }
  const rename = (series: string): string => {
    if (renamed.has(series)) return renamed.get(series)!;
    const m = /^(.*)_(bucket|sum|count)$/.exec(series);
    if (m !== null && types.get(m[1]!) === "histogram") return `${renamed.get(m[1]!)!}_${m[2]!}`;
    return series;
  };
  return lines
    .map((l) => {
      const meta = /^# (HELP|TYPE|UNIT) (\S+)(.*)$/.exec(l);
      if (meta !== null) return meta[1] === "UNIT" ? "" : `# ${meta[1]!} ${rename(meta[2]!)}${meta[3]!}`;
      const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(.*)$/.exec(l);
      return sample === null ? l : `${rename(sample[1]!)}${sample[2]!}`;
    })
    .join("\n");
}
