#!/usr/bin/env bash
# `npm test`: build (CLI and process tests spawn dist/), install the real backends the tests use
# (scripts/ensure-test-deps.sh), then run the whole vitest suite. Extra arguments go to vitest,
# e.g. `npm test -- test/estimate`.
#
# Without arguments the seed scenario's run (test/testbed/seed-run.test.ts) goes last, alone: it
# measures a swarm of 43 nodes on real processes, and the orderings it asserts are about the scenario,
# so it must not share the machine's cores with the rest of the suite's processes. Last, so that its
# figures and any failure are at the end of the output, where a CI log's tail shows them; a closing
# line says which of the two runs failed.
set -euo pipefail
cd "$(dirname "$0")/.."
[[ -d node_modules ]] || npm ci --no-audit --no-fund
npm run --silent build
bash scripts/ensure-test-deps.sh
if [[ $# -gt 0 ]]; then exec npx vitest run "$@"; fi
SEED_RUN=test/testbed/seed-run.test.ts
suite=0
seed=0
npx vitest run --exclude "$SEED_RUN" || suite=$?
npx vitest run "$SEED_RUN" || seed=$?
echo "npm test: suite exit $suite, seed-run test exit $seed"
exit $((suite != 0 ? suite : seed))
