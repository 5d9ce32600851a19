#!/usr/bin/env bash
# `npm test`: build (CLI and process tests spawn dist/), install the real backends the tests use
# (scripts/ensure-test-deps.sh), then run the whole vitest suite. Extra arguments go to vitest,
# e.g. `npm test -- test/estimate`.
set -euo pipefail
cd "$(dirname "$0")/.."
[[ -d node_modules ]] || npm ci --no-audit --no-fund
npm run --silent build
bash scripts/ensure-test-deps.sh
exec npx vitest run "$@"
