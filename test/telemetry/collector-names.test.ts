import { describe, expect, it } from "vitest";
import { collectorName, rewriteExposition } from "./collector-names.js";

describe("the Collector's Prometheus names (the compatibility specification's examples)", () => {
  it("adds unit, _total and _ratio suffixes as the Collector does", () => {
    expect(collectorName("http.server.request.duration", "s", "histogram")).toBe(
      "http_server_request_duration_seconds",
    );
    expect(collectorName("requests.count", "1", "counter")).toBe("requests_count_total");
    expect(collectorName("memory.usage", "By", "gauge")).toBe("memory_usage_bytes");
    expect(collectorName("throughput", "By/s", "gauge")).toBe("throughput_bytes_per_second");
    expect(collectorName("tailswarm.fanout.decisions", "{fanout}", "counter")).toBe(
      "tailswarm_fanout_decisions_total",
    );
    expect(collectorName("tailswarm.branch.commit_ratio", "1", "gauge")).toBe(
      "tailswarm_branch_commit_ratio",
    );
    expect(collectorName("tailswarm.branch.estimate.fresh", "1", "gauge")).toBe(
      "tailswarm_branch_estimate_fresh_ratio",
    );
    expect(collectorName("tailswarm.branch.lost_work", "s", "counter")).toBe(
      "tailswarm_branch_lost_work_seconds_total",
    );
    expect(collectorName("tailswarm.fanout.information_gain", "bit", "histogram")).toBe(
      "tailswarm_fanout_information_gain_bit",
    );
  });

  it("rewrites a scrape: families, histogram series, no UNIT lines", () => {
    const scrape = [
      "# HELP d_total Work lost",
      "# UNIT d_total s",
      "# TYPE d_total counter",
      'd_total{a="x"} 3',
      "# HELP h Latency",
      "# UNIT h s",
      "# TYPE h histogram",
      'h_bucket{le="0.1"} 1',
      "h_sum 0.05",
      "h_count 1",
    ].join("\n");
    expect(rewriteExposition(scrape).split("\n")).toEqual([
      "# HELP d_seconds_total Work lost",
      "",
      "# TYPE d_seconds_total counter",
      'd_seconds_total{a="x"} 3',
      "# HELP h_seconds Latency",
      "",
      "# TYPE h_seconds histogram",
      'h_seconds_bucket{le="0.1"} 1',
      "h_seconds_sum 0.05",
      "h_seconds_count 1",
    ]);
  });
});
