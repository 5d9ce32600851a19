#!/usr/bin/env bash
# Make a Docker engine answer here (CI and developers' machines): install Debian's docker.io and
# docker-compose when missing, start dockerd in the background when none answers, and wait until
# `docker info` does. Idempotent; prints what it did. Exit 0 when the engine answers.
#
# dockerd is started with the first of these that comes up and can create a user-defined bridge
# network (containers there find each other by name through Docker's embedded DNS):
#   overlay2 + iptables,  overlay2 without iptables,  vfs + iptables,  vfs without iptables
# TAILSWARM_DOCKER_STORAGE=overlay2|vfs pins the storage driver; TAILSWARM_DOCKERD_LOG sets the
# log file (default /var/log/tailswarm-dockerd.log); TAILSWARM_DOCKERD_WAIT_S the wait per try (30).
set -euo pipefail

log() { printf 'ensure-docker: %s\n' "$*" >&2; }
logfile="${TAILSWARM_DOCKERD_LOG:-/var/log/tailswarm-dockerd.log}"
wait_s="${TAILSWARM_DOCKERD_WAIT_S:-30}"

answers() { timeout 10 docker info >/dev/null 2>&1; }

describe() {
  docker info --format 'engine {{.ServerVersion}}, storage driver {{.Driver}}, cgroup {{.CgroupDriver}} v{{.CgroupVersion}}' 2>/dev/null || true
}

# 1. Install what is missing (Debian's packages: engine 20.10 and compose v1, `docker-compose`).
missing=()
command -v dockerd >/dev/null || missing+=(docker.io)
command -v docker-compose >/dev/null || missing+=(docker-compose)
command -v iptables >/dev/null || missing+=(iptables)
if [ ${#missing[@]} -gt 0 ]; then
  if ! command -v apt-get >/dev/null; then
    log "missing ${missing[*]} and no apt-get: install Docker by hand"
    exit 1
  fi
  log "installing ${missing[*]} (Debian packages)"
  export DEBIAN_FRONTEND=noninteractive
  if ! apt-get install -y --no-install-recommends "${missing[@]}" >/tmp/ensure-docker-apt.log 2>&1; then
    apt-get update >/tmp/ensure-docker-apt.log 2>&1
    apt-get install -y --no-install-recommends "${missing[@]}" >>/tmp/ensure-docker-apt.log 2>&1 || {
      tail -n 20 /tmp/ensure-docker-apt.log >&2
      exit 1
    }
  fi
else
  log "docker.io and docker-compose present"
fi
# The machine image may carry a newer client in /usr/local/bin; both talk to the engine.
log "$(docker --version 2>/dev/null | head -n1); docker-compose $(docker-compose version --short 2>/dev/null || echo '?')"

# 2. An engine already answering is used as it is.
if answers; then
  log "dockerd already answering: $(describe)"
  exit 0
fi
if pgrep -x dockerd >/dev/null; then
  log "a dockerd runs but does not answer yet; waiting ${wait_s}s"
  for _ in $(seq 1 "$wait_s"); do answers && { log "answering: $(describe)"; exit 0; }; sleep 1; done
  log "dockerd (pid $(pgrep -x dockerd | tr '\n' ' ')) does not answer; see $logfile"
  exit 1
fi

# 3. Start dockerd: the first configuration that comes up and can make a user-defined network.
mkdir -p "$(dirname "$logfile")"
case "${TAILSWARM_DOCKER_STORAGE:-}" in
  "") drivers=(overlay2 vfs) ;;
  *) drivers=("$TAILSWARM_DOCKER_STORAGE") ;;
esac
for driver in "${drivers[@]}"; do
  for iptables in true false; do
    args=(--storage-driver="$driver" --iptables="$iptables")
    [ "$iptables" = false ] && args+=(--ip-masq=false)
    log "starting dockerd ${args[*]} (log: $logfile)"
    printf '\n==== %s ensure-docker: dockerd %s\n' "$(date -u +%FT%TZ)" "${args[*]}" >>"$logfile"
    # dockerd outlives this script: it takes only stdin, stdout and stderr, not what the caller holds open
    # (a `flock` on a lock file would stay held by dockerd for as long as it runs)
    (
      for fd in /proc/self/fd/*; do
        fd=${fd##*/}
        if [ "$fd" -gt 2 ]; then eval "exec $fd>&-" 2>/dev/null || true; fi
      done
      exec setsid dockerd "${args[@]}"
    ) >>"$logfile" 2>&1 </dev/null &
    pid=$!
    up=0
    for _ in $(seq 1 "$wait_s"); do
      if answers; then up=1; break; fi
      kill -0 "$pid" 2>/dev/null || break
      sleep 1
    done
    if [ "$up" = 1 ]; then
      probe="tailswarm-ensure-$$"
      if docker network create "$probe" >/dev/null 2>&1 && docker network rm "$probe" >/dev/null 2>&1; then
        log "dockerd pid $pid answering: $(describe), iptables=$iptables"
        exit 0
      fi
      log "dockerd came up but cannot create a bridge network; trying the next configuration"
    else
      log "dockerd did not come up with ${args[*]}: $(tail -n 3 "$logfile" | tr '\n' ' ')"
    fi
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 20); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
  done
done
log "no configuration of dockerd came up; see $logfile"
exit 1
