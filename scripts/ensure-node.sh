#!/usr/bin/env bash
# Run a command on a Node that tailswarm supports, installing one from the npm registry when the
# `node` on PATH is too old.
#
#   scripts/ensure-node.sh CMD [ARGS...]          run CMD with a Node >= package.json's engines floor
#   scripts/ensure-node.sh --nvmrc CMD [ARGS...]  run CMD on the major in .nvmrc (CI: everything on 24)
#   scripts/ensure-node.sh [--nvmrc] --bin-dir    print the directory to put first on PATH, run nothing
#
# When the node on PATH is below the floor (or, with --nvmrc, not of .nvmrc's major), the newest
# release of that major is installed from the npm registry, which serves the official Node binaries
# as packages (`node-<os>-<arch>`, the packages the `node` package installs), with npm checking the
# tarball's integrity, into $TAILSWARM_NODE_CACHE (default ~/.cache/tailswarm/node; outside the
# checkout). A release installed there before is used as it is, without the network. CMD then runs
# with that Node first on PATH, so every `node`, `npm` and `npx` below it (and every process the
# tests start with process.execPath) runs on it.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
log() { printf 'ensure-node: %s\n' "$*" >&2; }

nvmrc=0 print=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --nvmrc) nvmrc=1; shift ;;
    --bin-dir) print=1; shift ;;
    -h | --help) sed -n '2,15p' "$0"; exit 0 ;;
    --) shift; break ;;
    *) break ;;
  esac
done
[[ $print -eq 1 || $# -gt 0 ]] || { log "usage: scripts/ensure-node.sh [--nvmrc] CMD [ARGS...] | --bin-dir"; exit 2; }

# The floor: package.json's engines.node (">=X.Y.Z"); the major to install: .nvmrc.
floor="$(sed -n 's/^ *"node": *">=\([0-9.]*\)".*/\1/p' "$root/package.json" | head -n1)"
major="$(tr -d ' \nv' <"$root/.nvmrc")"
major="${major%%.*}"
[[ "$floor" =~ ^[0-9]+(\.[0-9]+){0,2}$ && "$major" =~ ^[0-9]+$ ]] || {
  log "could not read the floor from package.json's engines.node (got '$floor') or the major from .nvmrc (got '$major')"
  exit 1
}

# "a.b.c" >= "x.y.z"
at_least() {
  local IFS=.
  local -a have=($1) want=($2)
  for i in 0 1 2; do
    ((${have[i]:-0} > ${want[i]:-0})) && return 0
    ((${have[i]:-0} < ${want[i]:-0})) && return 1
  done
  return 0
}

current="$(node --version 2>/dev/null || true)"
current="${current#v}"
if [[ $nvmrc -eq 1 ]]; then want="Node $major (.nvmrc)"; else want="Node >= $floor (package.json engines)"; fi
fits() {
  [[ -n "$1" ]] || return 1
  if [[ $nvmrc -eq 1 ]]; then [[ "${1%%.*}" == "$major" ]]; else at_least "$1" "$floor"; fi
}

bin_dir=""
if ! fits "$current"; then
  case "$(uname -s)" in
    Linux) os=linux ;;
    Darwin) os=darwin ;;
    *) log "no Node binary package for $(uname -s); install Node >= $floor yourself"; exit 1 ;;
  esac
  case "$(uname -m)" in
    x86_64 | amd64) arch=x64 ;;
    aarch64 | arm64) arch=arm64 ;;
    *) log "no Node binary package for $(uname -m); install Node >= $floor yourself"; exit 1 ;;
  esac
  pkg="node-$os-$arch"
  cache="${TAILSWARM_NODE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/tailswarm/node}"
  # The newest release of the major already here.
  found="$(ls -d "$cache/$pkg-$major".* 2>/dev/null | sort -V | tail -n1 || true)"
  if [[ -z "$found" || ! -x "$found/bin/node" ]]; then
    command -v npm >/dev/null || { log "npm is needed to install Node $major (or install Node >= $floor yourself)"; exit 1; }
    log "node on PATH is ${current:-missing}, expected $want; installing $pkg@$major from the npm registry into $cache"
    mkdir -p "$cache"
    tmp="$(mktemp -d "$cache/.install.XXXXXX")"
    trap 'rm -rf "$tmp"' EXIT
    npm install --prefix "$tmp" --no-save --no-package-lock --no-audit --no-fund --ignore-scripts \
      --loglevel=error "$pkg@$major" >&2
    got="$("$tmp/node_modules/$pkg/bin/node" --version)"
    got="${got#v}"
    [[ "${got%%.*}" == "$major" ]] || { log "$pkg@$major installed Node $got"; exit 1; }
    found="$cache/$pkg-$got"
    mkdir -p "$tmp/bin"
    ln -s "../node_modules/$pkg/bin/node" "$tmp/bin/node"
    # Another run may have installed the same release meanwhile: keep the first.
    if mv -T "$tmp" "$found" 2>/dev/null; then
      trap - EXIT
      log "installed Node $got at $found"
    fi
  fi
  bin_dir="$found/bin"
fi

if [[ $print -eq 1 ]]; then
  if [[ -n "$bin_dir" ]]; then echo "$bin_dir"; else dirname "$(command -v node)"; fi
  exit 0
fi
if [[ -n "$bin_dir" ]]; then
  export PATH="$bin_dir:$PATH"
  # npm tells scripts which node ran it; they now run on this one.
  export NODE="$bin_dir/node" npm_node_execpath="$bin_dir/node"
fi
exec "$@"
