#!/usr/bin/env bash
# Build the tailswarm node image from docker/Dockerfile, choosing the base image:
#   TAILSWARM_DOCKER_BASE=public   node:24-bookworm-slim (docker pulls it if it is not local)
#   TAILSWARM_DOCKER_BASE=offline  tailswarm/node-base:24-offline, built by docker/offline-base.sh
#   TAILSWARM_DOCKER_BASE=auto     (default) public when it is already local or when this is not a
#                                  Debian machine; otherwise offline (no image registry is
#                                  assumed; `docker pull node:24-bookworm-slim` once to change that)
#   BASE_IMAGE=...                 any other base, used as given
# TAILSWARM_IMAGE names the result (default tailswarm:dev); TAILSWARM_BUILD_CONTEXT is the
# directory built (default: this checkout; e.g. a `git archive` export of one commit). A host whose npm trusts an extra CA
# (NODE_EXTRA_CA_CERTS, or TAILSWARM_BUILD_CA) passes it to the build stage: docker/build-ca/.
# OCI labels: org.opencontainers.image.version is package.json's version; .revision the commit of this
# checkout (`-dirty` with uncommitted changes; TAILSWARM_REVISION overrides, e.g. for an exported
# context); .source TAILSWARM_SOURCE, else the checkout's `origin` remote.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
image="${TAILSWARM_IMAGE:-tailswarm:dev}"
context="${TAILSWARM_BUILD_CONTEXT:-$root}"
public_base="node:24-bookworm-slim"
offline_base="${TAILSWARM_OFFLINE_BASE:-tailswarm/node-base:24-offline}"
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

version="$(sed -n 's/^  "version": *"\([^"]*\)".*/\1/p' "$context/package.json" | head -n1)"
revision="${TAILSWARM_REVISION:-}"
if [ -z "$revision" ] && git -C "$root" rev-parse --verify -q HEAD >/dev/null 2>&1; then
  revision="$(git -C "$root" rev-parse HEAD)"
  [ "$context" = "$root" ] && [ -n "$(git -C "$root" status --porcelain --untracked-files=no 2>/dev/null)" ] &&
    revision="$revision-dirty"
fi
source_url="${TAILSWARM_SOURCE:-$(git -C "$root" config --get remote.origin.url 2>/dev/null || true)}"

log "building $image on $base (version ${version:-?}, revision ${revision:-?}, source ${source_url:-?})"
start=$(date +%s)
labels=()
[ -n "$version" ] && labels+=(--label "org.opencontainers.image.version=$version")
[ -n "$revision" ] && labels+=(--label "org.opencontainers.image.revision=$revision")
[ -n "$source_url" ] && labels+=(--label "org.opencontainers.image.source=$source_url")
"${builder[@]}" docker build --force-rm -f "$context/docker/Dockerfile" --build-arg "BASE_IMAGE=$base" \
  "${labels[@]}" -t "$image" "$context" >&2
size="$(docker image inspect -f '{{.Size}}' "$image" | awk '{printf "%.0f MB", $1/1e6}')"
log "built $image ($size) in $(($(date +%s) - start)) s"
