/**
 * The public surface, through the package's own entry ("tailswarm" → src/index.ts): every name it
 * exports is imported here and used as an embedding application would. `npm run lint`
 * (scripts/check-surface.mjs) fails on a public name that neither this file nor a README/docs example
 * uses, so a name joins the surface together with a use of it.
 */
import { describe, expect, it } from "vitest";
import * as tailswarm from "tailswarm";
import {
  AbandonLedger,
  argmaxScores,
  classify,
  combineObservers,
  Coordinator,
  createSwarmServer,
  createTelemetry,
  decide,
  FlightRecorder,
  GrpcTransport,
  HandlerRegistry,
  LatencyBook,
  loadConfig,
  MemoryTransport,
  NodeClient,
  predicateModel,
  quorumVote,
  SimClock,
  SpeculationBudgetViolation,
  SwarmNode,
  systemClock,
  TailswarmError,
} from "tailswarm";
import type {
  BranchCallOptions,
  BranchRecord,
  BranchRequest,
  BranchResult,
  Classification,
  Clock,
  CoordinatorOptions,
  DecideInput,
  DecisionModel,
  DecisionRecord,
  FanoutEstimate,
  FanoutObserver,
  FanoutOptions,
  FanoutOutcome,
  FanoutRouter,
  GrpcTransportOptions,
  HandlerContext,
  LatencyBookOptions,
  Mode,
  NodeConfig,
  PeerEstimate,
  PeerId,
  PeerTransport,
  PolicyName,
  Reason,
  Requirement,
  RouteChoice,
  ScoresAnswer,
  SwarmNodeOptions,
  SwarmServer,
  SwarmServerOptions,
  TailswarmErrorCode,
  TaskHandler,
  Task,
  Telemetry,
  TelemetryOptions,
  VoteAnswer,
} from "tailswarm";

describe("the public surface", () => {
  it("exports exactly these values (a new one is added here, with a use)", () => {
    expect(Object.keys(tailswarm).sort()).toEqual(
      [
        "AbandonLedger",
        "argmaxScores",
        "classify",
        "combineObservers",
        "Coordinator",
        "createSwarmServer",
        "createTelemetry",
        "decide",
        "FlightRecorder",
        "GrpcTransport",
        "HandlerRegistry",
        "LatencyBook",
        "loadConfig",
        "MemoryTransport",
        "NodeClient",
        "predicateModel",
        "quorumVote",
        "SimClock",
        "SpeculationBudgetViolation",
        "SwarmNode",
        "systemClock",
        "TailswarmError",
      ].sort(),
    );
    for (const fn of [classify, decide, predicateModel, loadConfig, createSwarmServer]) {
      expect(typeof fn).toBe("function");
    }
    expect(typeof SwarmNode.start).toBe("function");
    expect(SpeculationBudgetViolation.prototype).toBeInstanceOf(TailswarmError);
  });

  it("runs fan-outs on the in-memory transport with telemetry, a ledger and an observer of its own", async () => {
    const sim = new SimClock();
    const clock: Clock = sim;
    expect(systemClock.now()).toBeGreaterThan(0);
    const transport = new MemoryTransport(clock, { seed: 1 });
    transport.addPeer("a", { latency: 5, handler: (): VoteAnswer => ({ vote: "yes" }) });
    transport.addPeer("b", { latency: 8, handler: (): VoteAnswer => ({ vote: "yes" }) });
    const bookOptions: Partial<LatencyBookOptions> = { windowMs: 60_000, minSamples: 5 };
    const book = new LatencyBook(bookOptions, clock);
    const telemetryOptions: TelemetryOptions = { clock, recorderCapacity: 8 };
    const telemetry: Telemetry = createTelemetry(telemetryOptions);
    const seen: Mode[] = [];
    const mine: FanoutObserver = { onFanoutEnd: (o: FanoutOutcome) => seen.push(o.classification.mode) };
    const options: CoordinatorOptions = {
      transport: telemetry.wrapTransport(transport),
      book,
      clock,
      ledger: { priorMs: 0 },
      observer: combineObservers([telemetry.observer, mine]),
    };
    const coordinator = new Coordinator(options);
    const model: DecisionModel<VoteAnswer, string> = quorumVote({ prior: "no" });
    const firstK: FanoutRouter = (candidates, k): RouteChoice => ({
      peers: candidates.slice(0, k),
      speculationFeasible: true,
    });
    const fanout: FanoutOptions<VoteAnswer, string> = {
      peers: ["a", "b"],
      budgetMs: 1_000,
      model,
      router: firstK,
    };
    const task: Task = { kind: "vote", payload: { question: "ship?" } };
    let outcome: FanoutOutcome | undefined;
    for (let i = 0; i < 8; i++) outcome = await sim.runUntilSettled(coordinator.fanOut(task, fanout));
    const c: Classification = outcome!.classification;
    const reason: Reason = c.reason;
    expect(typeof reason).toBe("string");
    expect(outcome!.action).toBe("yes");
    const records: readonly BranchRecord[] = outcome!.branches;
    expect(records.map((r) => r.peer).sort()).toEqual(["a", "b"]);
    expect(seen).toHaveLength(8);
    // the fan-outs named no policy: the default's own ledger decided them and learnt from them
    expect(coordinator.ledgers.of("p99-boundary")).toBeInstanceOf(AbandonLedger);
    expect(coordinator.ledgers.made().map(([p]) => p)).toEqual(["p99-boundary"]);
    const recent: readonly DecisionRecord[] = telemetry.recorder!.last(1);
    expect(recent).toHaveLength(1);
    const estimate: PeerEstimate = book.estimate("a" satisfies PeerId, clock.now());
    expect(estimate.samples).toBeGreaterThan(0);
    const all: Requirement = { kind: "all" };
    const fan: FanoutEstimate = book.fanout(["a", "b"], all, clock.now());
    expect(fan.p99Ms).toBeGreaterThanOrEqual(fan.p50Ms);
    const policy: PolicyName = "p99-boundary";
    const input: DecideInput = {
      policy,
      budgetMs: 1_000,
      estimate: fan,
      abandonCostMs: 0,
      relevant: true,
      speculationFeasible: true,
      anyPeerLive: true,
      hasFallback: false,
    };
    expect(decide(input).mode).toBe(c.mode);
    expect(new FlightRecorder({ capacity: 1 }).last(1)).toEqual([]);
    const scored = argmaxScores({ actions: ["x", "y"], prior: "x", bounds: { min: 0, max: 1 } });
    const scores: ScoresAnswer = { scores: { x: 0, y: 1 } };
    expect(scored.decide(new Map([["a", scores]]))).toBe("y");
    telemetry.close();
  });

  it("serves a task over gRPC on loopback and calls it through GrpcTransport", async () => {
    const upper: TaskHandler = {
      kind: "upper",
      async handle(t: Task, ctx: HandlerContext) {
        ctx.signal.throwIfAborted();
        return String((t.payload as { text: string }).text).toUpperCase();
      },
    };
    const serverOptions: SwarmServerOptions = { nodeId: "n1", handlers: new HandlerRegistry([upper]) };
    const server: SwarmServer = createSwarmServer(serverOptions);
    const { address } = await server.listen("127.0.0.1:0");
    const transportOptions: GrpcTransportOptions = {};
    const grpc: PeerTransport = new GrpcTransport(transportOptions);
    try {
      const req: BranchRequest = {
        fanoutId: "f",
        branchId: "f.0",
        task: { kind: "upper", payload: { text: "hi" } },
        origin: "test",
        hop: 0,
        deadline: Date.now() + 5_000,
      };
      const call: BranchCallOptions = { signal: new AbortController().signal };
      const result: BranchResult = await grpc.branch(address, req, call);
      expect(result).toMatchObject({ kind: "answer", answer: "HI" });
    } finally {
      (grpc as GrpcTransport).close();
      server.forceClose();
    }
  });

  it("types a node's config, options and client; the error codes are a closed set", async () => {
    const { config } = await loadConfig({ argv: ["--node-id", "n", "--listen", "127.0.0.1:0"], env: {} });
    const typed: NodeConfig = config;
    const nodeOptions: SwarmNodeOptions = { config: typed };
    expect(nodeOptions.config.nodeId).toBe("n");
    const client = new NodeClient("127.0.0.1:1");
    client.close();
    const code: TailswarmErrorCode = "INVALID_ARGUMENT";
    expect(TailswarmError.is(new TailswarmError(code, "x"), code)).toBe(true);
    expect(classify(100, 10, 50, 0, true).mode).toBe("speculate");
  });
});
