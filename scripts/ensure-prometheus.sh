#!/usr/bin/env bash
# Install Debian's Prometheus when it is missing and, optionally, start a throwaway server.
#
#   scripts/ensure-prometheus.sh                          install only (idempotent; CI calls this)
#   scripts/ensure-prometheus.sh --target 127.0.0.1:9464  install, then start a server scraping it
#        [--port 9090] [--dir /tmp/prom-XXXX] [--interval 1s] [--job tailswarm]
#
# With --target it writes a config into a temp dir, starts /usr/bin/prometheus on 127.0.0.1:<port>
# with that dir as its storage, waits until /-/ready answers, and prints three lines:
#   PROMETHEUS_URL=http://127.0.0.1:<port>  PROMETHEUS_PID=<pid>  PROMETHEUS_DIR=<dir>
# Stop it with `kill <pid>`; remove <dir> afterwards. Loopback only.
set -euo pipefail

target="" port=9090 dir="" interval="1s" job="tailswarm"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --target) target="$2"; shift 2 ;;
    --port) port="$2"; shift 2 ;;
    --dir) dir="$2"; shift 2 ;;
    --interval) interval="$2"; shift 2 ;;
    --job) job="$2"; shift 2 ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) echo "ensure-prometheus: unknown option '$1'" >&2; exit 2 ;;
  esac
done

bin=/usr/bin/prometheus
if [[ ! -x "$bin" ]]; then
  if [[ "$(id -u)" -ne 0 ]]; then
    echo "ensure-prometheus: $bin missing and not root; run: apt-get install -y prometheus" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  # --no-install-recommends: the server alone, without node-exporter & co.
  if ! apt-get install -y --no-install-recommends prometheus >/tmp/ensure-prometheus-apt.log 2>&1; then
    apt-get update >>/tmp/ensure-prometheus-apt.log 2>&1
    apt-get install -y --no-install-recommends prometheus >>/tmp/ensure-prometheus-apt.log 2>&1 || {
      tail -20 /tmp/ensure-prometheus-apt.log >&2
      exit 1
    }
  fi
  # The Debian package may start a system service on :9090 where an init system runs; we never rely on it.
  if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet prometheus 2>/dev/null; then
    systemctl stop prometheus || true
  fi
fi

[[ -z "$target" ]] && { "$bin" --version 2>&1 | head -1; exit 0; }

[[ -z "$dir" ]] && dir="$(mktemp -d /tmp/tailswarm-prometheus.XXXXXX)"
mkdir -p "$dir/data"
cat >"$dir/prometheus.yml" <<YAML
global:
  scrape_interval: ${interval}
  evaluation_interval: ${interval}
scrape_configs:
  - job_name: ${job}
    scrape_interval: ${interval}
    static_configs:
      - targets: ["${target}"]
YAML

"$bin" --config.file="$dir/prometheus.yml" --storage.tsdb.path="$dir/data" \
  --web.listen-address="127.0.0.1:${port}" --log.level=warn >"$dir/prometheus.log" 2>&1 &
pid=$!

for _ in $(seq 1 100); do
  if curl -fsS "http://127.0.0.1:${port}/-/ready" >/dev/null 2>&1; then
    echo "PROMETHEUS_URL=http://127.0.0.1:${port}"
    echo "PROMETHEUS_PID=${pid}"
    echo "PROMETHEUS_DIR=${dir}"
    exit 0
  fi
  if ! kill -0 "$pid" 2>/dev/null; then
    echo "ensure-prometheus: prometheus exited; log:" >&2
    cat "$dir/prometheus.log" >&2
    exit 1
  fi
  sleep 0.2
done
echo "ensure-prometheus: prometheus did not become ready on :${port}" >&2
kill "$pid" 2>/dev/null || true
exit 1
