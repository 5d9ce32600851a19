/**
 * End to end: three `tailswarm node` processes (dist/cli/main.js) export their spans over OTLP/gRPC to
 * a real receiver in this test. One `Coordinate` on node a fans out to b and c; the test finds one
 * trace spanning the three processes: a's Coordinate server span → a's fan-out span (with the
 * decision's attributes) → a's branch spans → b's and c's Branch server spans.
 */
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NodeClient } from "../../src/node/client.js";
import type { CoordinateAnswer } from "../../src/node/client.js";
import { startOtlpReceiver } from "./otlp-receiver.js";
import type { OtlpReceiver, ReceivedSpan } from "./otlp-receiver.js";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const MAIN = join(ROOT, "dist", "cli", "main.js");
const BRANCH = "tailswarm.v1.Swarm/Branch";
const COORDINATE = "tailswarm.v1.Swarm/Coordinate";
const PACKAGE_VERSION = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string })
  .version;

interface Proc {
  readonly id: string;
  readonly child: ChildProcess;
  readonly address: string;
  readonly exited: Promise<number | null>;
  readonly stderr: () => string;
  /** The JSON log lines written so far. */
  readonly logs: () => readonly Record<string, unknown>[];
  waitFor(pred: (line: Record<string, unknown>) => boolean, timeoutMs: number): Promise<void>;
}

/** Environment without the caller's TAILSWARM_ and OTEL_ variables, plus `extra`. */
function env(extra: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v !== undefined && !k.startsWith("TAILSWARM_") && !k.startsWith("OTEL_")) out[k] = v;
  }
  return { ...out, ...extra };
}

function startNode(id: string, args: readonly string[], extraEnv: Record<string, string>): Promise<Proc> {
  const child = spawn(process.execPath, [MAIN, "node", "--node-id", id, "--listen", "127.0.0.1:0", ...args], {
    cwd: ROOT,
    env: env(extraEnv),
    stdio: ["ignore", "ignore", "pipe"],
  });
  const lines: Record<string, unknown>[] = [];
  const waiters = new Set<() => void>();
  let raw = "";
  let partial = "";
  child.stderr.on("data", (d: Buffer) => {
    raw += d.toString();
    partial += d.toString();
    const parts = partial.split("\n");
    partial = parts.pop() ?? "";
    for (const p of parts) {
      if (!p.startsWith("{")) continue;
      try {
        lines.push(JSON.parse(p) as Record<string, unknown>);
      } catch {
        continue;
      }
      for (const w of [...waiters]) w();
    }
  });
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  const waitFor = (pred: (l: Record<string, unknown>) => boolean, timeoutMs: number): Promise<void> =>
    new Promise((resolve, reject) => {
      const check = (): void => {
        if (!lines.some(pred)) return;
        waiters.delete(check);
        clearTimeout(t);
        resolve();
      };
      const t = setTimeout(() => {
        waiters.delete(check);
        reject(new Error(`node ${id}: expected log line not seen in ${timeoutMs} ms; stderr:\n${raw}`));
      }, timeoutMs);
      waiters.add(check);
      void exited.then((code) => {
        if (!waiters.delete(check)) return;
        clearTimeout(t);
        reject(new Error(`node ${id} exited with ${code}; stderr:\n${raw}`));
      });
      check();
    });
  return waitFor((l) => l.msg === "listening", 60_000).then(() => ({
    id,
    child,
    address: lines.find((l) => l.msg === "listening")!.address as string,
    exited,
    stderr: () => raw,
    logs: () => lines,
    waitFor,
  }));
}

// The whole set-up and its checks, once per context manager a node can run with: the trace must be
// one and whole either way (sync carries the context only through synchronous calls, and every span
// path of a node parents explicitly or within one).
describe.each(["async-hooks", "sync"])("context manager %s", (contextManager) => {
  let receiver: OtlpReceiver | undefined;
  const nodes: Proc[] = [];
  let dir = "";
  let reply: CoordinateAnswer | undefined;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "tailswarm-otlp-"));
    if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: run \`npm run build\` first`);
    receiver = await startOtlpReceiver();
    const otel = {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
      OTEL_EXPORTER_OTLP_PROTOCOL: "grpc",
      OTEL_TRACES_EXPORTER: "otlp",
      OTEL_METRICS_EXPORTER: "none",
      OTEL_BSP_SCHEDULE_DELAY: "100",
      TAILSWARM_LOG_LEVEL: "info",
      TAILSWARM_TELEMETRY_CONTEXT_MANAGER: contextManager,
    };
    const peerConfig = join(dir, "peer.yaml");
    const usesManager = (l: Record<string, unknown>): boolean =>
      l.msg === "telemetry started" && l.contextManager === contextManager;
    writeFileSync(peerConfig, "handlers:\n  - { kind: vote, use: vote, options: { stance: ship } }\n");
    const [b, c] = await Promise.all([
      startNode("b", ["--config", peerConfig], otel),
      startNode("c", ["--config", peerConfig], otel),
    ]);
    nodes.push(b, c);
    const a = await startNode(
      "a",
      [
        ...["--peers", `${b.address},${c.address}`, "--region", "eu-west"],
        ...["--probe-interval-ms", "500", "--estimator-min-samples", "3"],
      ],
      // The engine's debug lines (decision, fan-out end), to find the fan-out's trace ids in them.
      { ...otel, TAILSWARM_TRACE: "engine" },
    );
    nodes.push(a);
    for (const n of nodes) await n.waitFor(usesManager, 5_000);
    await a.waitFor((l) => l.msg === "peer up" && l.peer === "b", 30_000);
    await a.waitFor((l) => l.msg === "peer up" && l.peer === "c", 30_000);

    // Both peers vote "ship" against a prior of "hold", so every fan-out waits for both answers. The
    // first fan-outs fill the estimator (min 3 samples per peer); the last one decides on fresh
    // estimates and is the one whose trace the test reads.
    const client = new NodeClient(a.address);
    try {
      const call = {
        kind: "vote",
        payload: { question: "ship?" },
        decision: "quorum-vote",
        options: { options: ["ship", "hold"], prior: "hold" },
      };
      for (let i = 0; i < 4; i++) await client.coordinate(call, 10_000);
      reply = await client.coordinate(call, 10_000);
    } finally {
      client.close();
    }
    // SIGTERM: each node drains, then its telemetry shutdown flushes the batch span processor.
    for (const n of nodes) n.child.kill("SIGTERM");
    const codes = await Promise.all(nodes.map((n) => n.exited));
    expect(codes).toEqual([0, 0, 0]);
  }, 180_000);

  afterAll(async () => {
    for (const n of nodes)
      if (n.child.exitCode === null && n.child.signalCode === null) n.child.kill("SIGKILL");
    await receiver?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const num = (v: unknown): number => {
    expect(typeof v).toBe("number");
    return v as number;
  };

  describe(`OTLP/gRPC export from three nodes (telemetry.contextManager ${contextManager})`, () => {
    it("one trace spans the coordinator and both peers, parent links intact", async () => {
      const r = reply!;
      expect(r.fanoutId).not.toBe("");
      expect(r.committed).toBe(2);
      const spans = receiver!.spans;
      // Everything was flushed at SIGTERM; allow for the last export still in flight.
      await receiver!.waitFor(
        (all) => all.some((s) => s.attributes["tailswarm.fanout.id"] === r.fanoutId),
        10_000,
      );
      const fanout = spans.find(
        (s) => s.name === "tailswarm.fanout" && s.attributes["tailswarm.fanout.id"] === r.fanoutId,
      )!;
      const traceId = fanout.traceId;
      await receiver!.waitFor(
        (all) => all.filter((s) => s.traceId === traceId && s.name === BRANCH).length >= 2,
        10_000,
      );
      const inTrace = spans.filter((s) => s.traceId === traceId);
      const byId = new Map(inTrace.map((s) => [s.spanId, s]));
      const node = (s: ReceivedSpan): unknown => s.resource["tailswarm.node.id"];

      // a: Coordinate server span (the trace's root: the test's client sends no context) → fan-out.
      const coordinate = byId.get(fanout.parentSpanId)!;
      expect(coordinate).toMatchObject({ name: COORDINATE, kind: "SPAN_KIND_SERVER", parentSpanId: "" });
      expect(coordinate.attributes).toMatchObject({
        "rpc.system.name": "grpc",
        "rpc.method": COORDINATE,
        "rpc.response.status_code": "OK",
      });
      expect(node(coordinate)).toBe("a");
      expect(node(fanout)).toBe("a");
      expect(fanout.kind).toBe("SPAN_KIND_INTERNAL");

      // a: one CLIENT branch span per peer, children of the fan-out span.
      const branches = inTrace.filter((s) => s.name === "tailswarm.branch");
      expect(branches.map((b) => b.attributes["tailswarm.peer"]).sort()).toEqual(["b", "c"]);
      for (const b of branches) {
        expect(b.kind).toBe("SPAN_KIND_CLIENT");
        expect(b.parentSpanId).toBe(fanout.spanId);
        expect(node(b)).toBe("a");
        expect(b.attributes["tailswarm.branch.outcome"]).toBe("committed");
        expect(num(b.attributes["tailswarm.branch.deadline"])).toBeGreaterThan(0);
      }

      // b and c: their Branch server spans hang under a's branch span to that peer.
      const servers = inTrace.filter((s) => s.name === BRANCH);
      expect(servers.map(node).sort()).toEqual(["b", "c"]);
      for (const s of servers) {
        expect(s.kind).toBe("SPAN_KIND_SERVER");
        const parent = byId.get(s.parentSpanId)!;
        // every peer's SERVER span pairs with a CLIENT span on the coordinator
        expect(parent).toMatchObject({ name: "tailswarm.branch", kind: "SPAN_KIND_CLIENT" });
        expect(parent.attributes["tailswarm.peer"]).toBe(node(s));
        expect(s.attributes).toMatchObject({
          "rpc.system.name": "grpc",
          "rpc.method": BRANCH,
          "rpc.response.status_code": "OK",
          "tailswarm.fanout.id": r.fanoutId,
          "tailswarm.branch.id": parent.attributes["tailswarm.branch.id"],
          "tailswarm.branch.status": "answered",
        });
        // where it was served (the :authority a dialled) and where it came from (a's socket)
        const served = nodes.find((n) => n.id === node(s))!.address;
        expect(`${String(s.attributes["server.address"])}:${num(s.attributes["server.port"])}`).toBe(served);
        expect(s.attributes["client.address"]).toBe("127.0.0.1");
        expect(num(s.attributes["client.port"])).toBeGreaterThan(0);
        expect(s.status).not.toBe("STATUS_CODE_ERROR");
      }
      // Three processes in one trace.
      expect(new Set(inTrace.map(node))).toEqual(new Set(["a", "b", "c"]));

      // a's log line for the fan-out's end is written inside the Coordinate handler after its awaits:
      // AsyncLocalStorage carries the Coordinate server span there, the sync manager does not.
      const end = nodes[2]!.logs().find((l) => l.msg === "fanout end" && l.fanoutId === r.fanoutId);
      expect(end).toBeDefined();
      if (contextManager === "async-hooks") {
        expect(end).toMatchObject({ trace_id: traceId, span_id: coordinate.spanId, trace_flags: "01" });
      } else {
        expect(end).not.toHaveProperty("trace_id");
      }
    });

    it("the fan-out span carries the decision: mode, reason, budget, p50/p99, abandon cost, relevance", () => {
      const r = reply!;
      const fanout = receiver!.spans.find(
        (s) => s.name === "tailswarm.fanout" && s.attributes["tailswarm.fanout.id"] === r.fanoutId,
      )!;
      const a = fanout.attributes;
      expect(a["tailswarm.mode"]).toBe(r.mode);
      expect(a["tailswarm.reason"]).toBe(r.reason);
      expect(["speculate", "synchronous"]).toContain(a["tailswarm.mode"]);
      expect(num(a["tailswarm.budget_ms"])).toBeGreaterThan(0);
      expect(num(a["tailswarm.fanout.p50_ms"])).toBeCloseTo(r.fanoutP50Ms, 6);
      expect(num(a["tailswarm.fanout.p99_ms"])).toBeCloseTo(r.fanoutP99Ms, 6);
      expect(num(a["tailswarm.fanout.p99_ms"])).toBeGreaterThanOrEqual(num(a["tailswarm.fanout.p50_ms"]));
      expect(num(a["tailswarm.fanout.abandon_cost_ms"])).toBeGreaterThanOrEqual(0);
      expect(typeof a["tailswarm.fanout.can_flip"]).toBe("boolean");
      expect(typeof a["tailswarm.fanout.decision_relevant"]).toBe("boolean");
      expect(a["tailswarm.fanout.size"]).toBe(2);
      expect(a["tailswarm.estimate.status"]).toBe("fresh");
      expect(num(a["tailswarm.estimate.min_samples"])).toBeGreaterThanOrEqual(3);
      expect(a["tailswarm.fanout.branches.committed"]).toBe(2);
      expect(a["tailswarm.task.kind"]).toBe("vote");
      expect(fanout.resource).toMatchObject({
        "service.name": "tailswarm-node",
        "service.version": PACKAGE_VERSION,
        "service.instance.id": "a",
        "cloud.region": "eu-west",
      });
      // b and c run in no region of their own ("default"): no cloud.region for them.
      const peerSpan = receiver!.spans.find((s) => s.resource["tailswarm.node.id"] === "b")!;
      expect(peerSpan.resource).toMatchObject({ "service.instance.id": "b" });
      expect(peerSpan.resource).not.toHaveProperty("cloud.region");
    });
  });
});
