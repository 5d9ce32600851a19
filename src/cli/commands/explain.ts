/**
 * `tailswarm explain` — the one rule on the command line: give it a budget, the fan-out p50/p99 and
 * the abandon cost, and it says speculate, synchronous or degrade, with the inequality that decided.
 *
 *   tailswarm explain --budget-ms 90 --p50-ms 22 --p99-ms 340 --abandon-cost-ms 5
 *   tailswarm explain --budget-ms 400 --p50-ms 22 --p99-ms 340 --abandon-cost-ms 5 --json
 *   tailswarm explain --budget-ms 400 --p50-ms 22 --p99-ms 87 --p99-lower-bound --abandon-cost-ms 5
 *   tailswarm explain --reasons     (every reason a coordinator can give, with its condition)
 *
 * Exit codes: 0 decided; 2 usage error (the message names the flag); 3 SpeculationBudgetViolation
 * (budget <= 0, or p99 < p50), with the error's code and message on stderr. The help says so too.
 */
import { TailswarmError } from "../../errors.js";
import { classify } from "../../policy/classify.js";
import { decide } from "../../policy/decide.js";
import { describeClassification, formatReasonTable } from "../../policy/describe.js";
import type { Classification } from "../../policy/types.js";
import { SpeculationBudgetViolation } from "../../policy/violation.js";
import { EXIT, exclusiveFlags, formatHelp, numberFlag, parseFlags } from "../args.js";
import { CliError, guard, helpHint } from "../verb-errors.js";

const FLAGS = {
  "budget-ms": {
    type: "string",
    valueName: "MS",
    description: "remaining budget of the fan-out, ms (<= 0 is a violation)",
  },
  "p50-ms": { type: "string", valueName: "MS", description: "fan-out p50 of the required peers, ms (>= 0)" },
  "p99-ms": {
    type: "string",
    valueName: "MS",
    description: "fan-out p99 of the required peers, ms (>= 0; below p50 is a violation)",
  },
  "abandon-cost-ms": {
    type: "string",
    valueName: "MS",
    description: "expected work lost by abandoning the branches, ms (>= 0)",
  },
  "p50-lower-bound": {
    type: "boolean",
    description:
      "p50 is only a lower bound (beyond the horizon: the true median is at least that); implies --p99-lower-bound",
  },
  "p99-lower-bound": {
    type: "boolean",
    description: "p99 is only a lower bound (the true tail is at least that): never speculates",
  },
  relevant: { type: "boolean", description: "the answers can still change the action (default)" },
  "not-relevant": { type: "boolean", description: "the answers cannot change the action" },
  json: { type: "boolean", description: 'print one JSON object: {"mode", "reason", ...the numbers}' },
  reasons: {
    type: "boolean",
    description:
      "print every reason a coordinator can give, its mode and condition (a Markdown table), and exit",
  },
} as const;

const USAGE =
  "tailswarm explain --budget-ms B --p50-ms X --p99-ms Y --abandon-cost-ms C [--p50-lower-bound] [--p99-lower-bound]\n" +
  "                  [--relevant|--not-relevant] [--json]\n" +
  "       tailswarm explain --reasons";
const DESCRIPTION =
  "Classify one fan-out by the speculation boundary: speculate when budget > p99 + abandon cost and the\n" +
  "answers can change the action; synchronous when p50 < budget (or not decision-relevant); degrade when\n" +
  "budget <= p50. A lower-bound p99 never speculates; a lower-bound p50 at or above the budget degrades.\n\n" +
  "exit codes: 0 decided, 2 usage, 3 SpeculationBudgetViolation (budget <= 0, or p99 < p50: the coordinator\n" +
  "would degrade and count a violation; the code and message go to stderr)";

/** The verb's entry point; returns the exit code. */
export function run(argv: string[]): Promise<number> {
  return guard("explain", async () => {
    const { values, help } = parseFlags(argv, FLAGS);
    if (help) {
      process.stdout.write(formatHelp(USAGE, DESCRIPTION, FLAGS));
      return EXIT.ok;
    }
    if (values.reasons === true) {
      process.stdout.write(formatReasonTable());
      return EXIT.ok;
    }
    exclusiveFlags(values, ["relevant", "not-relevant"]);
    const budget = numberFlag(values, "budget-ms", { required: true });
    const p50 = numberFlag(values, "p50-ms", { required: true, min: 0 });
    const p99 = numberFlag(values, "p99-ms", { required: true, min: 0 });
    const abandon = numberFlag(values, "abandon-cost-ms", { required: true, min: 0 });
    let c: Classification;
    try {
      const relevant = values["not-relevant"] !== true;
      classify(budget, p50, p99, abandon, relevant); // the violations, thrown as the rule states them
      const p50Bound = values["p50-lower-bound"] === true;
      const p99Bound = p50Bound || values["p99-lower-bound"] === true;
      c = decide({
        policy: "p99-boundary",
        budgetMs: budget,
        estimate: {
          status: "fresh",
          p50Ms: p50,
          p99Ms: p99,
          p50Kind: p50Bound ? "lower-bound" : "known",
          p99Kind: p99Bound ? "lower-bound" : "known",
        },
        abandonCostMs: abandon,
        relevant,
        speculationFeasible: true,
        anyPeerLive: true,
        hasFallback: true,
      });
    } catch (err: unknown) {
      if (err instanceof SpeculationBudgetViolation) {
        throw new CliError(`${err.code}: ${err.message}`, { exitCode: EXIT.violation, cause: err });
      }
      if (TailswarmError.is(err, "INVALID_ARGUMENT")) {
        throw new CliError(err.message, { exitCode: EXIT.usage, hint: helpHint("explain") });
      }
      throw err;
    }
    print(c, values.json === true);
    return EXIT.ok;
  });
}

function print(c: Classification, json: boolean): void {
  const { inequality, effect } = describeClassification(c);
  if (json) {
    const out = {
      mode: c.mode,
      reason: c.reason,
      budgetMs: c.budgetMs,
      p50Ms: c.fanoutP50Ms,
      p99Ms: c.fanoutP99Ms,
      p50Kind: c.fanoutP50Kind ?? "known",
      p99Kind: c.fanoutP99Kind ?? "known",
      abandonCostMs: c.abandonCostMs,
      relevant: c.relevant,
      inequality,
    };
    process.stdout.write(`${JSON.stringify(out)}\n`);
  } else {
    process.stdout.write(
      `mode:    ${c.mode}\nreason:  ${c.reason}\nbecause: ${inequality}\nso:      ${effect}\n`,
    );
  }
}
