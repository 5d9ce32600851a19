import { describe, expect, it } from "vitest";
import { formatStatus } from "../../src/cli/commands/status.js";
import type { StatusReply__Output } from "../../src/mesh/gen/tailswarm/v1/StatusReply.js";

const reply = (byPolicy: Record<string, number>): StatusReply__Output => ({
  nodeId: "c",
  region: "",
  version: "0",
  startedAtUnixMs: 0,
  uptimeMs: 1_000,
  kinds: [],
  queueDepth: 0,
  inFlight: 0,
  capacity: 8,
  coordinating: 0,
  draining: false,
  policy: "p99-boundary",
  fanouts: 3,
  decisions: { speculate: 1, synchronous: 1, degrade: 1 },
  violations: 0,
  abandonCostMs: 4,
  abandonCostMsByPolicy: byPolicy,
  peers: [],
  eventLoopDelayP50Ms: 1,
  eventLoopDelayP99Ms: 2,
  eventLoopDelayMaxMs: 3,
  probesSent: 0,
  ejectedPeers: [],
  activePeers: 0,
  peersKnown: 0,
  peersUp: 0,
});

describe("tailswarm status: each policy's own abandon ledger", () => {
  it("shows the other policies' costs beside the default policy's", () => {
    const text = formatStatus(reply({ "p99-boundary": 4, "naive-p50": 120.25 }), "127.0.0.1:7000");
    expect(text).toContain("abandon cost 4.0 ms (p99-boundary's ledger; naive-p50 120.3 ms)");
  });

  it("says nothing more while only the default policy has decided", () => {
    const text = formatStatus(reply({ "p99-boundary": 4 }), "127.0.0.1:7000");
    expect(text).toMatch(/abandon cost 4\.0 ms\n/);
  });
});
