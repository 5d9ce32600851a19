import { describe, expect, it } from "vitest";
import { renderReportView } from "../../src/testbed/report-html.js";
import type { StatsView } from "../../src/testbed/report-view.js";
import { report } from "./crafted-report.js";

describe("report.html from a report.json without the newer sections", () => {
  it("still renders, and says which chart it cannot draw and why", () => {
    const html = renderReportView(report({ net_value: undefined, failures: undefined }), "text");
    expect(html).toContain('id="verdict-text"');
    expect(html).toContain("This report.json has no net_value section.");
    expect(html).toContain("This report.json has no per-peer summary");
  });
});

describe("report.html reads the optional fields where a report carries them", () => {
  it("draws the fan-out-level and would-flip rates, the used/wasted split, misses by mode and the estimates' kinds", () => {
    const r = report();
    const slot = (s: StatsView, over: Partial<StatsView>): StatsView => ({ ...s, ...over });
    const policies = Object.fromEntries(
      Object.entries(r.policies).map(([p, s]) => [
        p,
        slot(s, {
          fanout_decision_relevant_commit_rate: 0.2,
          would_flip_share_of_abandoned: 0.7,
          peer_work_used_ms_per_fanout: 100,
          peer_work_cut_ms_per_fanout: 30,
          peer_work_redundant_ms_per_fanout: 20,
        }),
      ]),
    );
    const byCoordinator = Object.fromEntries(
      Object.entries(r.by_coordinator).map(([p, m]) => [
        p,
        Object.fromEntries(
          Object.entries(m).map(([c, s]) => [
            c,
            slot(s, { deadline_misses_by_mode: { synchronous: 3, error: 2 }, abandon_cost_estimate_ms: 42 }),
          ]),
        ),
      ]),
    );
    const html = renderReportView(
      {
        ...r,
        policies,
        by_coordinator: byCoordinator,
        measured: {
          ...r.measured,
          coordinator_estimates: {
            "coord-90ms": { p50_ms: 30, p99_ms: 120, p50_lower_bound_share: 0, p99_lower_bound_share: 0.4 },
          },
        },
      },
      "text",
    );
    expect(html).toContain("decision-relevant commit rate (fan-out level)");
    expect(html).toContain("abandoned fan-outs whose answers would flip the action");
    expect(html).toContain("Peer work per fan-out: used and wasted (ms)");
    expect(html).toContain("wasted: redundant");
    expect(html).toContain("Deadline misses per coordinator, by mode");
    expect(html).toContain("p99 a lower bound");
    expect(html).toContain("40%");
    expect(html).toContain("abandon cost, p99-boundary's ledger");
    expect(html).toContain("42.0 ms");
  });
});
