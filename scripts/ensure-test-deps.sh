#!/usr/bin/env bash
# Install what the real-backend tests need, where this machine lets us (root with apt-get):
#   prometheus                     a real Prometheus scrapes a real node (test/telemetry)
#   python3-grpcio python3-protobuf an independent gRPC implementation drives a node (test/interop),
#   protobuf-compiler                through stubs that protoc and the gRPC Python plugin generate from
#   protobuf-compiler-grpc           proto/ at test time (Debian's python3-grpc-tools bundles protoc
#                                    3.5, which rejects proto3 `optional`; these are 3.21 / grpc 1.51,
#                                    the versions of python3-protobuf and python3-grpcio)
#   openssl                        certificates generated at test time (TLS tests)
#   kubernetes-client              `kubectl kustomize` renders deploy/kubernetes (test/kubernetes), only
#                                  when no kubectl is installed: a kubectl already there (e.g. the cloud
#                                  SDK's) owns /usr/bin/kubectl. Debian bookworm's is 1.20, whose
#                                  embedded kustomize (v2) predates components; the test then says so
#   chromium fonts-dejavu-core     headless, driven by playwright-core: report.html as a person sees it
#   docker.io + docker-compose     only with TAILSWARM_DOCKER_TESTS=1 (test/docker; starts dockerd)
# Idempotent and quiet when everything is present. Not root or no apt-get: prints what is missing;
# the tests that need it then say why they are skipped (or fail, with TAILSWARM_REQUIRE_BACKENDS=1).
set -euo pipefail
cd "$(dirname "$0")/.."

missing=()
[[ -x /usr/bin/prometheus ]] || missing+=(prometheus)
/usr/bin/python3 -c 'import grpc, google.protobuf' >/dev/null 2>&1 || missing+=(python3-grpcio python3-protobuf)
[[ -x /usr/bin/protoc ]] || missing+=(protobuf-compiler)
[[ -x /usr/bin/grpc_python_plugin ]] || missing+=(protobuf-compiler-grpc)
command -v openssl >/dev/null 2>&1 || missing+=(openssl)
command -v kubectl >/dev/null 2>&1 || missing+=(kubernetes-client)
[[ -x /usr/bin/chromium ]] || missing+=(chromium fonts-dejavu-core)

if [[ ${#missing[@]} -gt 0 ]]; then
  if [[ "$(id -u)" -eq 0 ]] && command -v apt-get >/dev/null 2>&1; then
    echo "ensure-test-deps: installing ${missing[*]}" >&2
    export DEBIAN_FRONTEND=noninteractive
    log=/tmp/tailswarm-apt.log
    if ! apt-get install -y --no-install-recommends "${missing[@]}" >"$log" 2>&1; then
      apt-get update >>"$log" 2>&1
      apt-get install -y --no-install-recommends "${missing[@]}" >>"$log" 2>&1 || {
        tail -20 "$log" >&2
        exit 1
      }
    fi
    # The Debian package may start a system Prometheus on :9090 where an init system runs; the tests
    # start their own servers on free ports, so stop it.
    if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet prometheus 2>/dev/null; then
      systemctl stop prometheus || true
    fi
  else
    echo "ensure-test-deps: missing ${missing[*]} (install them as root: apt-get install -y ${missing[*]}); tests that need them will be skipped" >&2
  fi
fi

if [[ "${TAILSWARM_DOCKER_TESTS:-}" == "1" ]]; then
  bash docker/ensure-docker.sh
fi
