/**
 * A `.cpuprofile`'s busy time by category, for bench/profile-summary.ts: a sample is charged to the
 * innermost frame on its stack that belongs to OpenTelemetry's SDK (OTLP export, metrics, spans, the
 * context manager) or to src/telemetry — so grpc-js work the OTLP exporter does is export — and
 * otherwise to its own frame's package or module ("grpc-js", "node:internal/http2", "src/engine"…).
 * Work done in a later tick (a write's completion) has no such frame above it and stays with its own.
 */
export interface CallFrame {
  readonly functionName: string;
  readonly url: string;
  readonly lineNumber: number;
}

export interface Profile {
  readonly nodes: readonly {
    readonly id: number;
    readonly callFrame: CallFrame;
    readonly children?: readonly number[];
  }[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

/** Innermost frame first; the first rule a frame's url matches names the sample's category. */
const RULES: readonly (readonly [RegExp, string])[] = [
  [/@opentelemetry\/(exporter-|otlp-)/, "otel: OTLP export"],
  [/@opentelemetry\/sdk-metrics/, "otel: metrics SDK"],
  [/@opentelemetry\/sdk-trace/, "otel: span SDK"],
  [/@opentelemetry\/context-async-hooks/, "otel: context manager"],
  [/\/src\/telemetry\//, "src/telemetry"],
];

/** The package (`@grpc/grpc-js`), repository directory (`src/engine`) or Node module of a url. */
function moduleOf(url: string): string {
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg !== null) return pkg[1]!;
  const own = /\/(src|bench)\/([^/]+)/.exec(url);
  if (own !== null) return `${own[1]}/${own[2]!.replace(/\.ts$/, "")}`;
  if (url.startsWith("node:")) return url.split("/").slice(0, 3).join("/");
  return url === "" ? "(native)" : url;
}

/** µs of each category over the whole profile, idle left out ("(garbage collector)" is its own). */
export function categoryTotals(profile: Profile): Map<string, number> {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const memo = new Map<number, string>();
  const categoryOf = (id: number): string => {
    const known = memo.get(id);
    if (known !== undefined) return known;
    let found: string | undefined;
    for (let cur: number | undefined = id; cur !== undefined && found === undefined; cur = parent.get(cur)) {
      const url = byId.get(cur)!.callFrame.url;
      found = RULES.find(([re]) => re.test(url))?.[1];
    }
    const cf = byId.get(id)!.callFrame;
    const c = found ?? (cf.functionName.startsWith("(") ? cf.functionName : moduleOf(cf.url));
    memo.set(id, c);
    return c;
  };
  const totals = new Map<string, number>();
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i]!;
    const node = byId.get(id);
    if (node === undefined || node.callFrame.functionName === "(idle)") continue;
    const c = categoryOf(id);
    totals.set(c, (totals.get(c) ?? 0) + (profile.timeDeltas[i] ?? 0));
  }
  return totals;
}
