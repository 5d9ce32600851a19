import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfig, UsageError } from "../../src/node/config/load-config.js";
import { configLeaves, envName, flagName } from "../../src/node/config/schema.js";
import { scratchDir } from "../support/scratch-dir.js";

const dir = scratchDir("config");
function file(name: string, text: string): string {
  const p = join(dir(), name);
  writeFileSync(p, text);
  return p;
}

describe("node config", () => {
  it("has defaults for every required key", async () => {
    const { config, sources } = await loadConfig({ argv: [], env: {} });
    expect(config.listen).toBe("127.0.0.1:7400");
    expect(config.estimator).toEqual({
      windowMs: 10_000,
      slices: 6,
      minSamples: 20,
      observedFanoutSets: 64,
      observedMinSamples: 10,
      maxSamplesPerPeer: 1024,
      maxInFlightPerPeer: 24,
      windowMinCompletions: 100,
      windowMaxStretch: 3,
    });
    expect(config.activeSet).toEqual({ maxPeers: 1024 });
    expect(config.handlers.map((h) => h.kind)).toEqual(["echo", "vote"]);
    expect(config.tls).toEqual({ requireClientCert: false, reloadIntervalMs: 30_000 });
    expect(config.telemetry).toEqual({ contextManager: "async-hooks", tracesPerSecond: 10 });
    expect(config.nodeId).toMatch(/^[A-Za-z0-9][A-Za-z0-9._:-]+$/);
    expect(sources.listen).toBe("default");
  });

  it("layers file < env < flags", async () => {
    const yaml = file(
      "layers.yaml",
      "region: file-region\nlisten: 127.0.0.1:9000\npeers: [a:1, b:2]\nprobe:\n  intervalMs: 700\nestimator: { minSamples: 5 }\n",
    );
    const env = {
      TAILSWARM_REGION: "env-region",
      TAILSWARM_LISTEN: "127.0.0.1:9001",
      TAILSWARM_PEERS: "c:3,d:4",
    };
    const {
      config,
      sources,
      file: used,
    } = await loadConfig({
      argv: ["--config", yaml, "--listen", "127.0.0.1:9002", "--peers", "e:5", "--peers", "f:6,g:7"],
      env,
    });
    expect(used).toBe(yaml);
    expect(config.region).toBe("env-region");
    expect(config.listen).toBe("127.0.0.1:9002");
    expect(config.peers).toEqual(["e:5", "f:6", "g:7"]);
    expect(config.probe.intervalMs).toBe(700);
    expect(config.probe.failureThreshold).toBe(3);
    expect(config.estimator.minSamples).toBe(5);
    expect(sources).toMatchObject({
      region: "env",
      listen: "flag",
      "probe.intervalMs": "file",
      "probe.timeoutMs": "default",
    });
  });

  it("reads JSON files and TAILSWARM_CONFIG", async () => {
    const json = file(
      "c.json",
      JSON.stringify({ nodeId: "n-1", handlers: [{ kind: "v", use: "vote", options: { stance: "x" } }] }),
    );
    const { config, handlersBaseDir } = await loadConfig({ env: { TAILSWARM_CONFIG: json } });
    expect(config.nodeId).toBe("n-1");
    expect(config.handlers).toEqual([{ kind: "v", use: "vote", options: { stance: "x" } }]);
    expect(handlersBaseDir).toBe(dir());
  });

  it("parses handler lists from env and flags", async () => {
    const { config } = await loadConfig({
      env: { TAILSWARM_HANDLERS: "echo" },
      argv: ["--handlers", "echo,slow=synthetic,up=./x.mjs"],
    });
    expect(config.handlers).toEqual([
      { kind: "echo", use: "echo" },
      { kind: "slow", use: "synthetic" },
      { kind: "up", use: "./x.mjs" },
    ]);
  });

  it("takes a scalar where a list is expected (handlers: vote), as env and flags do", async () => {
    const yaml = file("scalar.yaml", "handlers: vote\npeers: a:1, b:2\n");
    const { config } = await loadConfig({ argv: ["--config", yaml], env: {} });
    expect(config.handlers).toEqual([{ kind: "vote", use: "vote" }]);
    expect(config.peers).toEqual(["a:1", "b:2"]);
    const mixed = file("mixed.yaml", "handlers: [echo, { kind: up, use: ./x.mjs }, slow=synthetic]\n");
    const { config: m } = await loadConfig({ argv: ["--config", mixed], env: {} });
    expect(m.handlers).toEqual([
      { kind: "echo", use: "echo" },
      { kind: "up", use: "./x.mjs" },
      { kind: "slow", use: "synthetic" },
    ]);
  });

  it("reads each default and range from the library that owns the option", async () => {
    const { LATENCY_BOOK_DEFAULTS } = await import("../../src/estimate/options.js");
    const { SERVER_DEFAULTS } = await import("../../src/mesh/server-limits.js");
    const { config } = await loadConfig({ argv: [], env: {} });
    expect(config.defaultBudgetMs).toBe(SERVER_DEFAULTS.defaultBudgetMs);
    expect(config.queueLimit).toBe(SERVER_DEFAULTS.maxQueue);
    expect(config.estimator.windowMs).toBe(LATENCY_BOOK_DEFAULTS.windowMs);
    const err = (await loadConfig({ env: { TAILSWARM_DEFAULT_BUDGET_MS: "0" } }).catch(
      (e: unknown) => e,
    )) as Error;
    expect(err.message).toContain(
      'defaultBudgetMs: got "0" (from env TAILSWARM_DEFAULT_BUDGET_MS), expected a number >= 1 <= 3600000',
    );
  });

  it("rejects unknown keys, naming them and suggesting the known one", async () => {
    const yaml = file("unknown.yaml", "listen: 127.0.0.1:1\nprobe:\n  intervallMs: 5\nregoin: eu\n");
    const err = await loadConfig({ argv: ["--config", yaml], env: {} }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: "INVALID_CONFIG" });
    const msg = (err as Error).message;
    expect(msg).toMatch(/probe\.intervallMs: got 5 \(from file .*unknown\.yaml\), expected a known key/);
    expect(msg).toContain("did you mean intervalMs?");
    expect(msg).toMatch(/regoin: got "eu" \(from file .*unknown\.yaml\), expected a known key/);
    expect(msg).toContain("did you mean region?");
  });

  it("names the field, the value, the source and the expectation of every bad value", async () => {
    const yaml = file(
      "bad.yaml",
      "estimator:\n  slices: 0\nhandlers:\n  - { kind: a, use: echo }\n  - { kind: a, use: vote }\n",
    );
    const err = (await loadConfig({
      argv: ["--config", yaml, "--listen", "localhost:99999"],
      env: { TAILSWARM_PROBE_INTERVAL_MS: "fast", TAILSWARM_TELEMETRY_TRACES_PER_SECOND: "-1" },
    }).catch((e: unknown) => e)) as Error;
    expect(err.message).toContain(
      'telemetry.tracesPerSecond: got "-1" (from env TAILSWARM_TELEMETRY_TRACES_PER_SECOND), expected a number >= 0',
    );
    expect(err.message).toContain('listen: got "localhost:99999" (from flag --listen), expected host:port');
    expect(err.message).toContain(
      'probe.intervalMs: got "fast" (from env TAILSWARM_PROBE_INTERVAL_MS), expected an integer >= 10',
    );
    expect(err.message).toMatch(
      /estimator\.slices: got 0 \(from file .*bad\.yaml\), expected an integer >= 1 <= 64/,
    );
    expect(err.message).toContain('handlers[1].kind: got "a"');
  });

  it("bounds the stretched ring across keys: slices × windowMaxStretch <= 192", async () => {
    const err = (await loadConfig({
      argv: ["--estimator-slices", "64"],
      env: { TAILSWARM_ESTIMATOR_WINDOW_MAX_STRETCH: "16" },
    }).catch((e: unknown) => e)) as Error;
    expect(err.message).toContain(
      "estimator.windowMaxStretch: got 16 (from env TAILSWARM_ESTIMATOR_WINDOW_MAX_STRETCH), expected at most 3 (slices 64 × windowMaxStretch <= 192 ring slots per peer)",
    );
    const ok = await loadConfig({
      argv: ["--estimator-slices", "64", "--estimator-window-max-stretch", "3"],
      env: {},
    });
    expect(ok.config.estimator.windowMaxStretch).toBe(3);
  });

  it("checks TLS settings together", async () => {
    const err = (await loadConfig({ argv: ["--tls-require-client-cert"], env: {} }).catch(
      (e: unknown) => e,
    )) as Error;
    expect(err.message).toContain("tls.cert: got nothing");
    expect(err.message).toContain("tls.ca: got nothing");
    const err2 = (await loadConfig({
      env: { TAILSWARM_TLS_CERT: "/nope.pem", TAILSWARM_TLS_KEY: "/nope.key" },
    }).catch((e: unknown) => e)) as Error;
    expect(err2.message).toContain(
      'tls.cert: got "/nope.pem" (from env TAILSWARM_TLS_CERT), expected a readable PEM file',
    );
  });

  it("treats unknown flags as usage errors and unknown TAILSWARM_ variables as warnings", async () => {
    await expect(loadConfig({ argv: ["--lisen", "x"] })).rejects.toBeInstanceOf(UsageError);
    const { warnings } = await loadConfig({ env: { TAILSWARM_REGOIN: "eu" } });
    expect(warnings[0]).toContain("TAILSWARM_REGOIN");
    expect(warnings[0]).toContain("did you mean TAILSWARM_REGION?");
  });

  it("reads routing.primitives from the file: queue keys, entries, per-context overrides", async () => {
    const yaml = file(
      "primitives.yaml",
      [
        "routing:",
        "  policy: mabp",
        "  primitives:",
        "    rag/0:",
        "      noReuse: { work: 4, penalty: 4, successors: [{ key: rag/1, p: 0.6 }] }",
        "      reuse: { work: 1, penalty: 1, successors: [{ key: rag/1, p: 0.1 }] }",
        "      byContext: { c17: { work: 0.5, penalty: -1 } }",
        "    rag/1: { noReuse: { work: 2, penalty: 2 } }",
        "",
      ].join("\n"),
    );
    const { config, sources, warnings } = await loadConfig({ argv: ["--config", yaml], env: {} });
    expect(sources["routing.primitives"]).toBe("file");
    expect(warnings).toEqual([]);
    expect(config.routing.primitives).toEqual({
      "rag/0": {
        noReuse: { work: 4, penalty: 4, successors: [{ key: "rag/1", p: 0.6 }] },
        reuse: { work: 1, penalty: 1, successors: [{ key: "rag/1", p: 0.1 }] },
        byContext: { c17: { work: 0.5, penalty: -1, successors: [] } },
      },
      "rag/1": { noReuse: { work: 2, penalty: 2, successors: [] } },
    });
    const { config: none } = await loadConfig({ argv: [], env: {} });
    expect(none.routing.primitives).toBeUndefined();
  });

  it("names the place, the value and the expectation of every fault in a primitive table", async () => {
    const cases: [unknown, string][] = [
      [[1, 2], "routing.primitives: got [1,2]"],
      [{ rag: {} }, 'routing.primitives["rag"]: got "rag"'],
      [{ "rag/0": { reuse: { work: 1, penalty: 1 } } }, 'routing.primitives["rag/0"].noReuse: got nothing'],
      [{ "rag/0": { noReuse: { work: 0, penalty: 1 } } }, 'routing.primitives["rag/0"].noReuse.work: got 0'],
      [{ "rag/0": { noReuse: { work: 1 } } }, 'routing.primitives["rag/0"].noReuse.penalty: got nothing'],
      [
        { "rag/0": { noReuse: { work: 1, penalty: 0, succesors: [] } } },
        'routing.primitives["rag/0"].noReuse.succesors: got [] (from file',
      ],
      [
        { "rag/0": { noReuse: { work: 1, penalty: 0, successors: [{ key: "rag/1", p: 1.5 }] } } },
        'routing.primitives["rag/0"].noReuse.successors[0].p: got 1.5',
      ],
      [
        {
          "rag/0": {
            noReuse: {
              work: 1,
              penalty: 0,
              successors: [
                { key: "rag/1", p: 0.7 },
                { key: "rag/2", p: 0.7 },
              ],
            },
          },
        },
        'routing.primitives["rag/0"].noReuse.successors: got [{"key":"rag/1","p":0.7},{"key":"rag/2","p":0.7}]',
      ],
      [
        { "rag/0": { noReuse: { work: 1, penalty: 0 }, byContext: { c1: { work: -2, penalty: 0 } } } },
        'routing.primitives["rag/0"].byContext["c1"].work: got -2',
      ],
    ];
    for (const [primitives, expected] of cases) {
      const json = file("bad-primitives.json", JSON.stringify({ routing: { policy: "mabp", primitives } }));
      const err = (await loadConfig({ argv: ["--config", json], env: {} }).catch((e: unknown) => e)) as Error;
      expect(err).toMatchObject({ code: "INVALID_CONFIG" });
      expect(err.message).toContain(expected);
      expect(err.message).toMatch(/\(from file .*bad-primitives\.json\), expected /);
    }
    const err = (await loadConfig({
      argv: [
        "--config",
        file(
          "sum.json",
          JSON.stringify({
            routing: {
              primitives: {
                "a/0": {
                  noReuse: {
                    work: 1,
                    penalty: 0,
                    successors: [
                      { key: "a/1", p: 0.7 },
                      { key: "a/2", p: 0.7 },
                    ],
                  },
                },
              },
            },
          }),
        ),
      ],
      env: {},
    }).catch((e: unknown) => e)) as Error;
    expect(err.message).toContain("expected probabilities summing to at most 1");
  });

  it("takes routing.primitives only from the file: env and flag are refused, saying so", async () => {
    const env = await loadConfig({ env: { TAILSWARM_ROUTING_PRIMITIVES: '{"rag/0":{}}' } }).catch(
      (e: unknown) => e,
    );
    expect(env).toMatchObject({ code: "INVALID_CONFIG" });
    expect((env as Error).message).toContain(
      'routing.primitives: got "{\\"rag/0\\":{}}" (from env TAILSWARM_ROUTING_PRIMITIVES), expected a primitive table given in the config file',
    );
    const flag = (await loadConfig({ argv: ["--routing-primitives", "x"], env: {} }).catch(
      (e: unknown) => e,
    )) as Error;
    expect(flag.message).toContain('routing.primitives: got "x" (from flag --routing-primitives)');
  });

  it("warns when routing.primitives is given to a policy that does not read primitives", async () => {
    const json = file(
      "jsq-primitives.json",
      JSON.stringify({
        routing: { policy: "jsq", primitives: { "rag/0": { noReuse: { work: 1, penalty: 0 } } } },
      }),
    );
    const { warnings } = await loadConfig({ argv: ["--config", json], env: {} });
    expect(warnings).toEqual([
      "routing.primitives is set, but routing.policy jsq does not read primitives (mabp and cost-bp do); ignored",
    ]);
  });

  it("derives env and flag names from the dotted path", () => {
    expect(envName("probe.failureThreshold")).toBe("TAILSWARM_PROBE_FAILURE_THRESHOLD");
    expect(flagName("tls.requireClientCert")).toBe("tls-require-client-cert");
    expect(new Set(configLeaves.map((f) => envName(f.path))).size).toBe(configLeaves.length);
  });
});

describe("docs/configuration.md", () => {
  it("lists every key, variable and flag", async () => {
    const { readFileSync } = await import("node:fs");
    const doc = readFileSync(join(__dirname, "..", "..", "docs", "configuration.md"), "utf8");
    for (const f of configLeaves) {
      expect(doc).toContain(`\`${f.path}\``);
      expect(doc).toContain(envName(f.path));
      expect(doc).toContain(`--${flagName(f.path)}`);
    }
    for (const code of ["| 0 ", "| 1 ", "| 2 ", "| 78 ", "| 130 ", "| 143 "]) expect(doc).toContain(code);
  });
});
