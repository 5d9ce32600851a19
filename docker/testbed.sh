#!/usr/bin/env bash
# The containerised testbed in one command (npm run testbed:docker): build the node image (on the
# offline base when no registry is at hand), start the seed swarm of docker/compose.yml, run the
# scenario's load generator, collect report.json / report.html, and tear everything down — on
# success, failure, Ctrl-C or SIGTERM — leaving no container, network or volume behind.
#
# usage: docker/testbed.sh [--scenario NAME] [--duration S] [--out DIR] [--small]
#                          [--kill-after S] [--observability] [--no-build]
#   --scenario NAME   scenario of the load generator (default seed-nat-tail)
#   --duration S      seconds of load (default 30)
#   --out DIR         where the report lands (default testbed/out/docker-<time>)
#   --small           10 peers instead of 40 (CI, laptops)
#   --kill-after S    SIGKILL one peer behind the gateway S seconds into the run; the fan-outs must
#                     still resolve by their deadlines and the peer be marked down
#   --observability   also start docker/compose.observability.yml (public images: needs a registry)
#   --no-build        use $TAILSWARM_IMAGE as it is
# env: TAILSWARM_IMAGE (default tailswarm:dev), TAILSWARM_DOCKER_BASE (see docker/build-image.sh),
#      TAILSWARM_TESTBED_STUB=1 runs the harness with a health-only stand-in for `tailswarm node`
#      (checks DNS, health, kill and teardown; no scenario, no report).
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
scenario=seed-nat-tail duration=30 out="" small=0 kill_after="" observability=0 build=1
while [ $# -gt 0 ]; do
  case "$1" in
    --scenario) scenario="$2"; shift ;;
    --duration) duration="$2"; shift ;;
    --out) out="$2"; shift ;;
    --small) small=1 ;;
    --kill-after) kill_after="$2"; shift ;;
    --observability) observability=1 ;;
    --no-build) build=0 ;;
    -h|--help) sed -n '2,22p' "$0"; exit 0 ;;
    *) echo "testbed: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done

# Messages go to fd 3, a copy of the original stderr: a trap can run while a function call's
# redirection (compose ... >/dev/null 2>&1) is in force, and its messages must still be seen.
exec 3>&2
log() { printf 'testbed: %s\n' "$*" >&3; }
export TAILSWARM_IMAGE="${TAILSWARM_IMAGE:-tailswarm:dev}"
project="tailswarm-tb-$$"
out="${out:-$root/testbed/out/docker-$(date -u +%Y%m%dT%H%M%SZ)}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/tailswarm-testbed.XXXXXX")"
loadgen="$project-loadgen"

files=(-f "$here/compose.yml")
[ "$observability" = 1 ] && files+=(-f "$here/compose.observability.yml")
if [ "${TAILSWARM_TESTBED_STUB:-0}" = 1 ]; then
  # Harness self-test: every node runs the health-only stand-in instead of `tailswarm node`.
  cat >"$work/stub.yml" <<EOF
x-stub: &stub
  entrypoint: ["node", "test-fixture/health-server.mjs"]
  command: []
  volumes:
    - $root/test/docker/fixtures/health-server.mjs:/app/test-fixture/health-server.mjs:ro
services:
  peers-eu: *stub
  peers-us: *stub
  peers-ap: *stub
  gateway-eu: *stub
  coordinator-90: *stub
  coordinator-200: *stub
  coordinator-1000: *stub
EOF
  files+=(-f "$work/stub.yml")
fi
if [ "$small" = 1 ]; then
  export SWARM_PEERS_EU=3 SWARM_PEERS_US=3 SWARM_PEERS_AP=2 SWARM_GATEWAY_EU=2
fi
export SWARM_SCENARIO="$scenario" SWARM_DURATION_S="$duration"
compose() { docker-compose "${files[@]}" -p "$project" "$@"; }

# ---- teardown: always, exactly once -----------------------------------------------------------
torn=0
# shellcheck disable=SC2317  # reached through the EXIT trap
teardown() {
  local rc=$?
  [ "$torn" = 1 ] && return
  torn=1
  trap '' INT TERM
  set +e
  exec 1>&3 2>&3
  if [ -n "${kill_pid:-}" ]; then kill "$kill_pid" 2>/dev/null; wait "$kill_pid" 2>/dev/null; fi
  log "tearing down $project"
  compose logs --no-color --timestamps >"$out/compose.log" 2>&1
  docker rm -f -v "$loadgen" >/dev/null 2>&1
  compose --profile run down --volumes --remove-orphans --timeout 10 >"$work/down.log" 2>&1 ||
    cat "$work/down.log" >&2
  # Whatever compose missed (an interrupted `up`, a stray `run`): by the project label.
  local label="label=com.docker.compose.project=$project" left
  docker ps -aq --filter "$label" | xargs -r docker rm -f -v >/dev/null
  docker network ls -q --filter "$label" | xargs -r docker network rm >/dev/null
  docker volume ls -q --filter "$label" | xargs -r docker volume rm >/dev/null
  left="$(docker ps -aq --filter "$label")$(docker network ls -q --filter "$label")$(docker volume ls -q --filter "$label")"
  if [ -n "$left" ]; then
    log "left behind after teardown: $left"
    [ "$rc" = 0 ] && rc=1
  fi
  rm -rf "$work"
  log "report and logs in $out"
  exit "$rc"
}
trap teardown EXIT
trap 'log "interrupted"; exit 130' INT
trap 'log "terminated"; exit 143' TERM

# ---- engine and image ---------------------------------------------------------------------------
timeout 10 docker info >/dev/null 2>&1 || "$here/ensure-docker.sh"
[ "$build" = 1 ] && "$here/build-image.sh"
docker image inspect "$TAILSWARM_IMAGE" >/dev/null

# ---- the swarm ----------------------------------------------------------------------------------
started=$(date +%s)
log "starting the swarm ($project$([ "$small" = 1 ] && echo ', small'))"
compose up -d --quiet-pull >"$work/up.log" 2>&1 || { cat "$work/up.log" >&2; exit 1; }

# Docker's own first health check comes only after the interval (30 s); ask the coordinators
# directly through the same check, and require every container to still be running.
coordinators=(coordinator-90 coordinator-200 coordinator-1000)
for _ in $(seq 1 60); do
  ready=0
  for c in "${coordinators[@]}"; do
    compose exec -T "$c" node docker/healthcheck.mjs >/dev/null 2>&1 && ready=$((ready + 1))
  done
  [ "$ready" = ${#coordinators[@]} ] && break
  sleep 2
done
[ "$ready" = ${#coordinators[@]} ] || { log "coordinators not serving after 120 s"; compose ps >&2; exit 1; }
exited="$(docker ps -aq --filter "label=com.docker.compose.project=$project" --filter status=exited)"
[ -z "$exited" ] || { log "containers exited during start-up"; compose ps >&2; exit 1; }
# Service DNS: every replica is one A record, as the coordinators see it.
for s in peers-eu peers-us peers-ap gateway-eu; do
  n="$(compose exec -T coordinator-90 node -e "require('dns').resolve4('$s',(e,a)=>console.log(e?0:a.length))" | tr -d '\r')"
  log "dns $s: $n records"
done
log "swarm up in $(($(date +%s) - started)) s: $(docker ps -q --filter "label=com.docker.compose.project=$project" | wc -l) containers"

# ---- fault: kill one peer behind the gateway mid-run ----------------------------------------------
if [ -n "$kill_after" ]; then
  victim="$(compose ps -q gateway-eu | head -n1)"
  (
    sleep "$kill_after"
    docker kill --signal KILL "$victim" >/dev/null &&
      printf '{"killed":"%s","service":"gateway-eu","at":"%s"}\n' \
        "$(docker inspect -f '{{.Name}}' "$victim" | sed 's|^/||')" "$(date -u +%FT%TZ)" >"$out/faults.json"
  ) &
  kill_pid=$!
fi

# ---- the scenario -------------------------------------------------------------------------------
rc=0
if [ "${TAILSWARM_TESTBED_STUB:-0}" = 1 ]; then
  log "stub mode: no load generator; waiting ${duration}s"
  sleep "$duration"
  if [ -n "$kill_after" ]; then
    wait "$kill_pid" || true
    kill_pid=""
    [ -s "$out/faults.json" ] && log "fault: $(cat "$out/faults.json")"
    # The killed peer must be gone from the service's DNS records.
    n="$(compose exec -T coordinator-90 node -e "require('dns').resolve4('gateway-eu',(e,a)=>console.log(e?0:a.length))" | tr -d '\r')"
    log "dns gateway-eu after the kill: $n records"
  fi
else
  # TODO(testbed): the load generator's verb and flags (issue 5) are drafted in compose.yml.
  log "running scenario $scenario for ${duration}s"
  compose run --name "$loadgen" loadgen || rc=$?
  docker cp "$loadgen:/tmp/tailswarm-out/." "$out/" 2>/dev/null || log "no report in the load generator"
  for f in report.json report.html; do [ -f "$out/$f" ] && log "$out/$f"; done
fi
exit "$rc"
