#!/usr/bin/env bash
# `npm test`: build (CLI and process tests spawn dist/), install the real backends the tests use
# (scripts/ensure-test-deps.sh), then run the whole vitest suite. Extra arguments go to vitest,
# e.g. `npm test -- test/estimate`.
#
# Without arguments the seed scenario's run (test/testbed/seed-run.test.ts) goes first, alone: it
# measures a swarm of 43 nodes on real processes, and the orderings it asserts are about the scenario,
# so it must not share the machine's cores with the rest of the suite's processes.
set -euo pipefail
cd "$(dirname "$0")/.."
[[ -d node_modules ]] || npm ci --no-audit --no-fund
npm run --silent build
bash scripts/ensure-test-deps.sh
if [[ $# -gt 0 ]]; then exec npx vitest run "$@"; fi
SEED_RUN=test/testbed/seed-run.test.ts
status=0
npx vitest run "$SEED_RUN" || status=$?
npx vitest run --exclude "$SEED_RUN" || status=$?
exit "$status"
