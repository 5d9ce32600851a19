import { describe, expect, it } from "vitest";
import { TailswarmError } from "../../src/errors.js";
import { loadScenario, parseScenario } from "../../src/testbed/scenario-loader.js";
import { decisionOptions, planPeers } from "../../src/testbed/topology.js";

const base = {
  name: "t",
  regions: [{ name: "r1", peers: 4, latency: { body: { medianMs: 5, sigma: 0.3 } } }],
  gateways: [{ group: "g", region: "r1", peers: 2, episodesPerSecond: 1, durationMs: { min: 10, max: 20 } }],
  coordinators: [{ name: "c", budgetMs: 90 }],
};

function errorOf(doc: unknown): string {
  try {
    parseScenario(doc, "/x/bad.yaml");
  } catch (error) {
    expect(TailswarmError.is(error, "INVALID_CONFIG")).toBe(true);
    return (error as Error).message;
  }
  throw new Error("expected the scenario to be refused");
}

describe("scenario validation names the field, the value and the expectation", () => {
  it("accepts a minimal scenario and fills the defaults", () => {
    const s = parseScenario(base);
    expect(s.policies).toEqual(["p99-boundary", "naive-p50", "always-sync", "never"]);
    expect(s.workload).toMatchObject({ prior: "hold", event: "act", gatewayWeight: "auto" });
  });

  it.each([
    [
      { ...base, regions: [{ ...base.regions[0], peers: -3 }] },
      "regions[0].peers: got -3 (from file /x/bad.yaml), expected an integer >= 1",
    ],
    [{ ...base, durationS: "long" }, 'durationS: got "long" (from file /x/bad.yaml), expected a number > 0'],
    [
      { ...base, policies: ["p99-boundary", "fastest"] },
      'policies[1]: got "fastest" (from file /x/bad.yaml), expected one of',
    ],
    [{ ...base, colour: "red" }, 'colour: got "red" (from file /x/bad.yaml), expected a known key'],
    [
      { ...base, gateways: [{ ...base.gateways[0], region: "mars" }] },
      'gateways[0].region: got "mars" (from file /x/bad.yaml), expected one of the regions (r1)',
    ],
    [
      { ...base, gateways: [{ ...base.gateways[0], peers: 9 }] },
      "gateways[0].peers: got 9 (from file /x/bad.yaml), expected at most the 4 peers",
    ],
    [
      { ...base, coordinators: [] },
      "coordinators: got [] (from file /x/bad.yaml), expected a list of at least 1 item(s)",
    ],
    [
      { ...base, coordinators: [{ name: "c", budgetMs: 0 }] },
      "coordinators[0].budgetMs: got 0 (from file /x/bad.yaml), expected a number > 0",
    ],
    [
      { ...base, workload: { prior: "maybe" } },
      'workload.prior: got "maybe" (from file /x/bad.yaml), expected one of hold, act',
    ],
    [
      { ...base, node: { listen: "1.2.3.4:5" } },
      'node.listen: got "1.2.3.4:5" (from file /x/bad.yaml), expected not set here: the launcher sets it',
    ],
    [
      { ...base, regions: [{ ...base.regions[0], latency: { body: { medianMs: 0 } } }] },
      "regions[0].latency.body.medianMs: got 0 (from file /x/bad.yaml), expected a number > 0",
    ],
    [
      { ...base, valueModel: { grid: { miss: [1, "x"] } } },
      'valueModel.grid.miss[1]: got "x" (from file /x/bad.yaml), expected a number >= 0',
    ],
  ])("refuses %#", (doc, message) => {
    expect(errorOf(doc)).toContain(message);
  });

  it("names an unknown scenario and where it looked", async () => {
    await expect(loadScenario("no-such-scenario")).rejects.toThrow(
      /--scenario: got "no-such-scenario", expected a file or a name in/,
    );
  });

  it("the shipped seed scenario: 40 peers in three regions, six behind one gateway, each of them pivotal", async () => {
    const s = await loadScenario("seed-nat-tail");
    const peers = planPeers(s);
    expect(peers).toHaveLength(40);
    expect(new Set(peers.map((p) => p.region)).size).toBe(3);
    const gw = peers.filter((p) => p.informed);
    expect(gw).toHaveLength(6);
    expect(s.coordinators.map((c) => c.budgetMs)).toContain(90);
    const w = gw[0]!.weight;
    const others = peers.length - gw.length;
    expect(6 * w).toBeGreaterThan(others); // together they outvote the rest
    expect(5 * w).toBeLessThanOrEqual(others); // without any one of them they do not
    expect(Object.keys((decisionOptions(s, peers) as { weights: object }).weights)).toHaveLength(6);
  });
});
