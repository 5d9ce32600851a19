#!/usr/bin/env bash
# TypeScript types of the wire contract, generated from proto/ by proto-loader-gen-types (it ships
# with @grpc/proto-loader) into src/mesh/gen/. Run by `npm run build` and `npm run typecheck`, so the
# types are always those of the proto in the tree; the directory is not checked in (.gitignore) and
# eslint, prettier and check-surface skip it. The flags mirror LOADER_OPTIONS in src/mesh/proto.ts
# (camelCase, longs and enums as Number/String, defaults filled, no virtual oneof fields): the
# `__Output` types are exactly what the loader decodes.
set -euo pipefail
cd "$(dirname "$0")/.."
out=src/mesh/gen
rm -rf "$out"
node_modules/.bin/proto-loader-gen-types \
  --longs=Number --enums=String --defaults --includeComments \
  --grpcLib=@grpc/grpc-js --importFileExtension=.js \
  -I proto -O "$out" \
  tailswarm/v1/swarm.proto tailswarm/v1/node_status.proto tailswarm/v1/decisions.proto >/dev/null
