#!/usr/bin/env bash
# Build the tailswarm node image from docker/Dockerfile, choosing the base image:
#   TAILSWARM_DOCKER_BASE=public   node:20-bookworm-slim (docker pulls it if it is not local)
#   TAILSWARM_DOCKER_BASE=offline  tailswarm/node-base:20-offline, built by docker/offline-base.sh
#   TAILSWARM_DOCKER_BASE=auto     (default) public when it is already local or when this is not a
#                                  Debian machine; otherwise offline (no image registry is
#                                  assumed; `docker pull node:20-bookworm-slim` once to change that)
#   BASE_IMAGE=...                 any other base, used as given
# TAILSWARM_IMAGE names the result (default tailswarm:dev); TAILSWARM_BUILD_CONTEXT is the
# directory built (default: this checkout; e.g. a `git archive` export of one commit). A host whose npm trusts an extra CA
# (NODE_EXTRA_CA_CERTS, or TAILSWARM_BUILD_CA) passes it to the build stage: docker/build-ca/.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
image="${TAILSWARM_IMAGE:-tailswarm:dev}"
context="${TAILSWARM_BUILD_CONTEXT:-$root}"
public_base="node:20-bookworm-slim"
offline_base="${TAILSWARM_OFFLINE_BASE:-tailswarm/node-base:20-offline}"
log() { printf 'build-image: %s\n' "$*" >&2; }

base="${BASE_IMAGE:-}"
if [ -z "$base" ]; then
  mode="${TAILSWARM_DOCKER_BASE:-auto}"
  if [ "$mode" = auto ]; then
    if docker image inspect "$public_base" >/dev/null 2>&1 || ! command -v apt-get >/dev/null; then
      mode=public
    else
      mode=offline
    fi
  fi
  case "$mode" in
    public) base="$public_base" ;;
    offline) "$here/offline-base.sh" --tag "$offline_base"; base="$offline_base" ;;
    *) log "TAILSWARM_DOCKER_BASE='$mode': expected public, offline or auto"; exit 2 ;;
  esac
fi

ca="${TAILSWARM_BUILD_CA:-${NODE_EXTRA_CA_CERTS:-}}"
if [ -n "$ca" ] && [ -s "$ca" ]; then
  mkdir -p "$context/docker/build-ca"
  cp "$ca" "$context/docker/build-ca/extra-ca.pem"
  log "build stage trusts the extra CA from $ca"
fi

builder=()
docker buildx version >/dev/null 2>&1 || builder=(env DOCKER_BUILDKIT=0)

log "building $image on $base"
start=$(date +%s)
"${builder[@]}" docker build --force-rm -f "$context/docker/Dockerfile" --build-arg "BASE_IMAGE=$base" -t "$image" "$context" >&2
size="$(docker image inspect -f '{{.Size}}' "$image" | awk '{printf "%.0f MB", $1/1e6}')"
log "built $image ($size) in $(($(date +%s) - start)) s"
