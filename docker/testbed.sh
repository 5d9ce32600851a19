#!/usr/bin/env bash
# The containerised testbed in one command (npm run testbed:docker): build the node image (on the
# offline base when no registry is at hand), generate the scenario's swarm from its file
# (`tailswarm testbed --emit-compose`: one container per peer and coordinator, a network per region
# plus `wan`, discovery by service DNS), start it, drive the coordinators with the same load
# generator as the process testbed (`tailswarm testbed --attach`, in a container on `wan`), collect
# report.json / report.html, and tear everything down — on success, failure, Ctrl-C or SIGTERM —
# leaving no container, network or volume behind.
#
# usage: docker/testbed.sh [--scenario NAME|FILE] [--duration S] [--out DIR] [--small]
#                          [--kill-after S] [--observability] [--no-build]
#   --scenario NAME   testbed/scenarios/NAME.yaml or a file (default seed-nat-tail)
#   --duration S      measured seconds (default: the scenario's; 20 with --small)
#   --out DIR         where the report lands (default testbed/out/docker-<time>)
#   --small           the `smoke` scenario (10 peers, 3 coordinators) unless --scenario is given (CI)
#   --kill-after S    SIGKILL one peer behind the gateway S seconds after the load generator sees the
#                     whole swarm (its warm-up included); the report says when the coordinators
#                     marked it down and how the fan-outs resolved
#   --observability   with the generated overlay (compose.observability.yml): telemetry on in every
#                     node, Prometheus scraping each node (and, when their images are here or a
#                     registry is, the OTel Collector + Jaeger and Grafana: docker/observability-images.sh);
#                     prints where they answer and writes OUT/dashboard.json (the dashboard's panels
#                     evaluated against Prometheus at the end of the run)
#   --no-build        use $TAILSWARM_IMAGE as it is
# env: TAILSWARM_IMAGE (default tailswarm:dev), TAILSWARM_DOCKER_BASE (see docker/build-image.sh),
#      TAILSWARM_PROMETHEUS_PORT / TAILSWARM_GRAFANA_PORT / TAILSWARM_JAEGER_PORT (loopback host ports;
#      9090 / 3000 / 16686; set empty, docker picks free ones),
#      TAILSWARM_TESTBED_STUB=1 runs the harness with a health-only stand-in for `tailswarm node`
#      (checks DNS, health, kill and teardown; no scenario, no report).
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
scenario="" duration="" out="" small=0 kill_after="" observability=0 build=1
while [ $# -gt 0 ]; do
  case "$1" in
    --scenario) scenario="$2"; shift ;;
    --duration) duration="$2"; shift ;;
    --out) out="$2"; shift ;;
    --small) small=1 ;;
    --kill-after) kill_after="$2"; shift ;;
    --observability) observability=1 ;;
    --no-build) build=0 ;;
    -h|--help) sed -n '2,29p' "$0"; exit 0 ;;
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

if [ "$small" = 1 ]; then
  scenario="${scenario:-smoke}"
  duration="${duration:-20}"
fi
scenario="${scenario:-seed-nat-tail}"
swarm="$work/swarm"
# A loaded engine answers slowly: compose v1's 60 s HTTP timeout fails `up` on a busy 2-core machine.
# (Not COMPOSE_PARALLEL_LIMIT: with a limit below the number of services compose 1.29's `up` hung here.)
export COMPOSE_HTTP_TIMEOUT="${COMPOSE_HTTP_TIMEOUT:-300}"
compose() { docker-compose "${files[@]}" -p "$project" "$@"; }
files=()
label="label=com.docker.compose.project=$project"

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
  if [ "${#files[@]}" -gt 0 ]; then
    compose logs --no-color --timestamps >"$out/compose.log" 2>&1
    docker rm -f -v "$loadgen" >/dev/null 2>&1
    compose --profile run down --volumes --remove-orphans --timeout 10 >"$work/down.log" 2>&1 ||
      cat "$work/down.log" >&2
  fi
  # Whatever compose missed (an interrupted `up`, a stray `run`, the generator): by the project label.
  local left
  docker ps -aq --filter "$label" | xargs -r docker rm -f -v >/dev/null
  # The daemon releases a removed container's network endpoint a little later, so a network removed at
  # once can still have "active endpoints" (seen in CI after a killed peer): retry for up to 10 s,
  # disconnecting by force what is still attached from the fifth try on.
  local net try
  for net in $(docker network ls -q --filter "$label"); do
    for try in 1 2 3 4 5 6 7 8 9 10; do
      docker network rm "$net" >/dev/null 2>&1 && break
      if [ "$try" -ge 5 ]; then
        docker network inspect -f '{{range $id, $e := .Containers}}{{$id}} {{end}}' "$net" 2>/dev/null |
          xargs -r -n1 docker network disconnect -f "$net" >/dev/null 2>&1
      fi
      sleep 1
    done
  done
  docker volume ls -q --filter "$label" | xargs -r docker volume rm >/dev/null
  left="$(docker ps -aq --filter "$label")$(docker network ls -q --filter "$label")$(docker volume ls -q --filter "$label")"
  if [ -n "$left" ]; then
    log "left behind after teardown: $left"
    [ "$rc" = 0 ] && rc=1
  fi
  [ -d "$swarm" ] && cp -r "$swarm" "$out/swarm" 2>/dev/null
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

# ---- the swarm, generated from the scenario file by the image itself ------------------------------
# No network, the caller's uid (the files land in $work), the project label (teardown finds it).
mkdir -p "$swarm"
scenario_arg="$scenario" mounts=()
if [ -f "$scenario" ]; then
  scenario_dir="$(cd "$(dirname "$scenario")" && pwd)"
  mounts=(-v "$scenario_dir:/scenario:ro")
  scenario_arg="/scenario/$(basename "$scenario")"
fi
docker run --rm --network none --user "$(id -u):$(id -g)" --label "com.docker.compose.project=$project" \
  -v "$work:/work" "${mounts[@]}" "$TAILSWARM_IMAGE" \
  testbed --scenario "$scenario_arg" --emit-compose /work/swarm 2>"$work/emit.log" ||
  { cat "$work/emit.log" >&2; exit 2; }
files=(-f "$swarm/compose.yml")
# The swarm's own nodes (peers and coordinators), by their labels.
nodes() {
  compose config | awk '
    /^  [A-Za-z0-9_.-]+:$/ { svc=$1; sub(":", "", svc) }
    /org.tailswarm.role: (peer|coordinator)$/ { print svc }'
}
if [ "$observability" = 1 ]; then
  # Which of Prometheus, collector + Jaeger, Grafana can run here (PROMETHEUS_IMAGE, COMPOSE_PROFILES,
  # OTEL_TRACES_EXPORTER=none without a collector); Prometheus is built from Debian's package offline.
  eval "$("$here/observability-images.sh" "$swarm")"
  files+=(-f "$swarm/compose.observability.yml")
fi
if [ "${TAILSWARM_TESTBED_STUB:-0}" = 1 ]; then
  # Harness self-test: every node runs the health-only stand-in instead of `tailswarm node`.
  {
    echo "x-stub: &stub"
    echo '  entrypoint: ["node", "test-fixture/health-server.mjs"]'
    echo "  command: []"
    echo "  volumes:"
    echo "    - $root/test/docker/fixtures/health-server.mjs:/app/test-fixture/health-server.mjs:ro"
    echo "services:"
    nodes | sed 's/.*/  &: *stub/'
  } >"$work/stub.yml"
  files+=(-f "$work/stub.yml")
fi
[ -n "$duration" ] && export SWARM_DURATION_S="$duration"
mapfile -t coordinators < <(compose config | awk '
  /^  [A-Za-z0-9_.-]+:$/ { svc=$1; sub(":", "", svc) }
  /org.tailswarm.role: coordinator/ { print svc }')
mapfile -t gateway_peers < <(compose config | awk '
  /^  [A-Za-z0-9_.-]+:$/ { svc=$1; sub(":", "", svc) }
  /org.tailswarm.gateway:/ { print svc }')

started=$(date +%s)
what="$(nodes | wc -l) nodes"
[ "$observability" = 1 ] && what="$what + $TAILSWARM_OBSERVABILITY"
log "starting the swarm of $scenario ($project: $what)"
compose up -d >"$work/up.log" 2>&1 || { cat "$work/up.log" >&2; exit 1; }

# Docker's own first health check comes only after its interval (30 s); ask the coordinators
# directly through the same check, and require every container to still be running.
ready=0
for _ in $(seq 1 90); do
  ready=0
  for c in "${coordinators[@]}"; do
    compose exec -T "$c" node docker/healthcheck.mjs >/dev/null 2>&1 && ready=$((ready + 1))
  done
  [ "$ready" = ${#coordinators[@]} ] && break
  sleep 2
done
[ "$ready" = ${#coordinators[@]} ] || { log "coordinators not serving after 180 s"; compose ps >&2; exit 1; }
exited="$(docker ps -aq --filter "$label" --filter status=exited)"
[ -z "$exited" ] || { log "containers exited during start-up"; compose ps >&2; exit 1; }
# Service DNS: every peer container is one A record of its region's alias, as the coordinators see it.
for name in $(compose config | grep -o 'peers-[A-Za-z0-9_-]*' | sort -u); do
  n="$(compose exec -T "${coordinators[0]}" node -e "require('dns').resolve4('$name',(e,a)=>console.log(e?0:a.length))" | tr -d '\r')"
  log "dns $name: $n records"
done
log "swarm up in $(($(date +%s) - started)) s: $(docker ps -q --filter "$label" | wc -l) containers"

# ---- observability: where it answers ---------------------------------------------------------------
prometheus_url=""
if [ "$observability" = 1 ]; then
  address() { compose port "$1" "$2" 2>/dev/null | tail -n1 | tr -d '\r'; }
  prometheus_url="http://$(address prometheus 9090)"
  for _ in $(seq 1 60); do
    curl -fsS "$prometheus_url/-/ready" >/dev/null 2>&1 && break
    sleep 1
  done
  curl -fsS "$prometheus_url/-/ready" >/dev/null 2>&1 || { log "prometheus not ready at $prometheus_url"; exit 1; }
  log "prometheus $prometheus_url (jobs tailswarm-coordinators, tailswarm-peers)"
  case ",${COMPOSE_PROFILES:-}," in *,grafana,*) log "grafana http://$(address grafana 3000)" ;; esac
  case ",${COMPOSE_PROFILES:-}," in *,traces,*) log "jaeger http://$(address jaeger 16686)" ;; esac
fi
# The dashboard's panels against Prometheus, before the swarm goes (Grafana or not).
snapshot() {
  [ -n "$prometheus_url" ] || return 0
  node "$here/dashboard-snapshot.mjs" "$prometheus_url" \
    "$swarm/observability/grafana/dashboards/tailswarm.json" "$out/dashboard.json" 2> >(sed 's/^/testbed: /' >&3) ||
    log "no dashboard snapshot"
}

# ---- fault: kill one peer behind the gateway once the load runs -------------------------------------
start_fault() {
  [ -n "$kill_after" ] || return 0
  local service="${gateway_peers[0]:-}" victim
  [ -n "$service" ] || { log "--kill-after: the scenario has no gateway peer"; return 0; }
  victim="$(compose ps -q "$service" | head -n1)"
  (
    sleep "$kill_after"
    docker kill --signal KILL "$victim" >/dev/null &&
      printf '{"killed":"%s","service":"%s","peer":"%s","at":"%s"}\n' \
        "$(docker inspect -f '{{.Name}}' "$victim" | sed 's|^/||')" "$service" "$service" \
        "$(date -u +%FT%T.%3NZ)" >"$out/faults.json" &&
      log "killed $service (SIGKILL)"
  ) &
  kill_pid=$!
}

# ---- the scenario -------------------------------------------------------------------------------
rc=0
if [ "${TAILSWARM_TESTBED_STUB:-0}" = 1 ]; then
  log "stub mode: no load generator; waiting ${duration:-20}s"
  start_fault
  sleep "${duration:-20}"
  if [ -n "$kill_after" ]; then
    wait "$kill_pid" || true
    kill_pid=""
    [ -s "$out/faults.json" ] && log "fault: $(cat "$out/faults.json")"
    # The killed peer must be gone from its region's DNS records.
    n="$(compose exec -T "${coordinators[0]}" node -e "require('dns').resolve4('${gateway_peers[0]}',(e,a)=>console.log(e?0:a.length))" | tr -d '\r')"
    log "dns ${gateway_peers[0]} after the kill: $n records"
  fi
  snapshot
else
  log "running scenario $scenario${duration:+ for ${duration}s} (load generator: tailswarm testbed --attach)"
  # The kill is timed from the start of the load generator's measured run, which begins after it
  # has seen every peer and warmed up; it prints "every coordinator sees" when attached.
  compose --profile run run -T --name "$loadgen" loadgen 2> >(tee "$work/loadgen.err" >&3) &
  run_pid=$!
  if [ -n "$kill_after" ]; then
    for _ in $(seq 1 240); do
      grep -q "every coordinator sees" "$work/loadgen.err" 2>/dev/null && break
      kill -0 "$run_pid" 2>/dev/null || break
      sleep 0.5
    done
    start_fault
  fi
  wait "$run_pid" || rc=$?
  docker cp "$loadgen:/tmp/tailswarm-out/." "$out/" 2>/dev/null || log "no report in the load generator"
  for f in report.json report.html; do [ -f "$out/$f" ] && log "$out/$f"; done
  snapshot
fi
exit "$rc"
