#!/usr/bin/env bash
# Which images of a generated swarm's observability overlay (DIR/compose.observability.yml) can run
# here, and the one that can be made without an image registry. Prints shell assignments to eval:
#
#   eval "$(docker/observability-images.sh DIR)"
#   docker-compose -f DIR/compose.yml -f DIR/compose.observability.yml -p NAME up -d
#
# Same choice as docker/build-image.sh (TAILSWARM_DOCKER_BASE=public|offline|auto): with a registry
# the pinned public images are used (compose pulls them). Without one (auto on a Debian machine
# without node:24-bookworm-slim), an image already here is used as it is, and otherwise:
#   prometheus       built as tailswarm/prometheus:offline from Debian's prometheus package
#                    (docker/prometheus-offline.Dockerfile, on the offline base; ~10 s once)
#   otel-collector,  no Debian package: left out. The nodes then export no traces
#   jaeger           (OTEL_TRACES_EXPORTER=none); their metrics are still scraped.
#   grafana          no Debian package: left out. The dashboard's queries run against
#                    Prometheus all the same (docker/dashboard-snapshot.mjs).
# Prints: PROMETHEUS_IMAGE, COMPOSE_PROFILES (traces, grafana: those whose images are at hand),
# OTEL_TRACES_EXPORTER=none without the traces profile, TAILSWARM_OBSERVABILITY (what runs, for logs).
# Any image variable already set in the caller's shell (e.g. GRAFANA_IMAGE) is used as it is.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
dir="${1:?usage: docker/observability-images.sh DIR (a tailswarm testbed --emit-compose DIR)}"
overlay="$dir/compose.observability.yml"
[ -f "$overlay" ] || { echo "observability-images: no $overlay" >&2; exit 2; }
log() { printf 'observability-images: %s\n' "$*" >&2; }
offline_tag="${TAILSWARM_PROMETHEUS_OFFLINE:-tailswarm/prometheus:offline}"
offline_base="${TAILSWARM_OFFLINE_BASE:-tailswarm/node-base:24-offline}"

# The image a variable names: the caller's value, else the overlay's pinned default.
image_of() {
  local var="$1" pinned
  pinned="$(grep -o "\${$var:-[^}]*}" "$overlay" | head -n1 | sed "s/^\${$var:-//; s/}$//")"
  printf '%s' "${!var:-$pinned}"
}
local_image() { docker image inspect "$1" >/dev/null 2>&1; }

mode="${TAILSWARM_DOCKER_BASE:-auto}"
if [ "$mode" = auto ]; then
  if local_image node:24-bookworm-slim || ! command -v apt-get >/dev/null; then mode=public; else mode=offline; fi
fi

build_prometheus() {
  local ctx
  bash "$root/scripts/ensure-prometheus.sh" >/dev/null
  "$here/offline-base.sh" --tag "$offline_base"
  ctx="$(mktemp -d "${TMPDIR:-/tmp}/tailswarm-prometheus-image.XXXXXX")"
  # shellcheck disable=SC2064  # expand now: ctx is local
  trap "rm -rf '$ctx'" RETURN
  cp /usr/bin/prometheus "$ctx/prometheus"
  # Debian's classic UI: its files, with the libjs-* symlinks resolved (less moment-timezone's
  # 200 MB of data: the page loads one file of it).
  (cd /usr/share/prometheus && tar -ch --exclude=web/static/moment-timezone web) | tar -C "$ctx" -x
  mkdir -p "$ctx/web/static/moment-timezone"
  cp -L /usr/share/prometheus/web/static/moment-timezone/moment-timezone-with-data.min.js \
    "$ctx/web/static/moment-timezone/" 2>/dev/null || true
  log "building $offline_tag from Debian's $(/usr/bin/prometheus --version 2>&1 | head -n1 | cut -d' ' -f1-3)"
  docker build -f "$here/prometheus-offline.Dockerfile" --build-arg "BASE_IMAGE=$offline_base" \
    -t "$offline_tag" "$ctx" >"$ctx/build.log" 2>&1 || { cat "$ctx/build.log" >&2; return 1; }
}

prometheus="$(image_of PROMETHEUS_IMAGE)"
if ! local_image "$prometheus" && [ "$mode" = offline ]; then
  if [ -z "${PROMETHEUS_IMAGE:-}" ] && { local_image "$offline_tag" || build_prometheus; }; then
    prometheus="$offline_tag"
  else
    log "$prometheus is not here and there is no registry"; exit 1
  fi
fi

profiles=() missing=()
usable() { local_image "$1" || [ "$mode" = public ]; }
if usable "$(image_of OTEL_COLLECTOR_IMAGE)" && usable "$(image_of JAEGER_IMAGE)"; then
  profiles+=(traces)
else
  missing+=("otel-collector + jaeger ($(image_of OTEL_COLLECTOR_IMAGE), $(image_of JAEGER_IMAGE)): no traces")
fi
if usable "$(image_of GRAFANA_IMAGE)"; then
  profiles+=(grafana)
else
  missing+=("grafana ($(image_of GRAFANA_IMAGE)): no dashboard UI")
fi
for m in "${missing[@]}"; do log "left out, not here and no registry to pull from: $m"; done

runs="prometheus${profiles[*]:+ ${profiles[*]}}"
printf 'export PROMETHEUS_IMAGE=%q\n' "$prometheus"
if [ ${#profiles[@]} -gt 0 ]; then
  printf 'export COMPOSE_PROFILES=%q\n' "$(IFS=,; echo "${profiles[*]}")"
else
  echo 'unset COMPOSE_PROFILES'
fi
[[ " ${profiles[*]} " == *" traces "* ]] || echo 'export OTEL_TRACES_EXPORTER=none'
printf 'export TAILSWARM_OBSERVABILITY=%q\n' "$runs"
log "runs: $runs (prometheus: $prometheus)"
