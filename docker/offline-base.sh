#!/usr/bin/env bash
# Build an equivalent of the public `node:24-bookworm-slim` image without any image registry:
# a Debian bookworm minbase root filesystem (debootstrap, from the Debian mirror apt already uses)
# plus Node 24 (.nvmrc's major) as scripts/ensure-node.sh provides it: the node on PATH when it is of
# that major, else the official binary the npm registry serves as `node-linux-<arch>` (cached in
# ~/.cache/tailswarm/node), with its headers; npm (and corepack, where it is installed) from this
# machine's npm. Imported with `docker import`.
#
# Same shape as the public image where the Dockerfile relies on it: node on PATH, npm and npx,
# a `node` user with uid/gid 1000 and home /home/node, CMD ["node"].
#
# usage: docker/offline-base.sh [--force] [--tag TAG]
#   --force   rebuild even if TAG exists (the cached Debian rootfs is reused; delete
#             docker/.cache/ to fetch Debian again)
#   env TAILSWARM_DEBIAN_MIRROR  Debian mirror (default: the first one in /etc/apt/sources.list*)
#   env TAILSWARM_OFFLINE_BASE   tag (default tailswarm/node-base:24-offline)
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
tag="${TAILSWARM_OFFLINE_BASE:-tailswarm/node-base:24-offline}"
force=0
while [ $# -gt 0 ]; do
  case "$1" in
    --force) force=1 ;;
    --tag) tag="$2"; shift ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    *) echo "offline-base: unknown argument '$1' (expected --force or --tag TAG)" >&2; exit 2 ;;
  esac
  shift
done

log() { printf 'offline-base: %s\n' "$*" >&2; }

if [ "$force" = 0 ] && docker image inspect "$tag" >/dev/null 2>&1; then
  log "$tag exists ($(docker image inspect -f '{{.Size}}' "$tag" | awk '{printf "%.0f MB", $1/1e6}')); --force rebuilds"
  exit 0
fi

start=$(date +%s)
suite=bookworm
arch="$(dpkg --print-architecture)"
cache="$here/.cache"
rootfs_tar="$cache/$suite-minbase-$arch.tar"

major="$(tr -d ' \nv' <"$here/../.nvmrc")"
major="${major%%.*}"
node_bin="$(bash "$here/../scripts/ensure-node.sh" --nvmrc --bin-dir)/node"
node_bin="$(readlink -f "$node_bin")"
node_prefix="$(dirname "$(dirname "$node_bin")")"
node_version="$("$node_bin" --version)"
case "$node_version" in
  "v$major".*) ;;
  *) log "node is $node_version; the base must be Node $major (.nvmrc)"; exit 1 ;;
esac
# npm: this machine's (its package directory, whatever node it was installed with).
npm_cli="$(readlink -f "$(command -v npm)")"
npm_dir="$(dirname "$(dirname "$npm_cli")")"
[ -f "$npm_dir/package.json" ] && [ "$(basename "$npm_dir")" = npm ] || { log "npm's package not found (from $npm_cli)"; exit 1; }
corepack_dir="$(dirname "$npm_dir")/corepack"

mirror="${TAILSWARM_DEBIAN_MIRROR:-}"
if [ -z "$mirror" ]; then
  # deb822 (URIs: ...) or one-line (deb URL suite ...) sources; first Debian main archive wins.
  mirror="$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.sources /etc/apt/sources.list.d/*.list 2>/dev/null \
    | grep -Eo '(URIs:[[:space:]]*|^deb[[:space:]]+)[a-z]+://[^[:space:]]+/debian/?([[:space:]]|$)' \
    | grep -Eo '[a-z]+://[^[:space:]]+' | head -n1 || true)"
  mirror="${mirror:-http://deb.debian.org/debian}"
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/tailswarm-base.XXXXXX")"
trap 'rm -rf "$work"' EXIT
rootfs="$work/rootfs"
mkdir -p "$rootfs" "$cache"

if [ -f "$rootfs_tar" ]; then
  log "reusing cached Debian rootfs $rootfs_tar"
  tar -C "$rootfs" -xf "$rootfs_tar"
else
  command -v debootstrap >/dev/null || {
    log "installing debootstrap"
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends debootstrap >/dev/null
  }
  log "debootstrap --variant=minbase $suite from $mirror"
  debootstrap --variant=minbase --arch="$arch" "$suite" "$rootfs" "$mirror" >"$work/debootstrap.log" 2>&1 || {
    tail -n 30 "$work/debootstrap.log" >&2
    exit 1
  }
  # Slim like debian:bookworm-slim: no docs (but copyrights), man pages, caches or apt lists.
  mkdir -p "$rootfs/etc/dpkg/dpkg.cfg.d"
  cat >"$rootfs/etc/dpkg/dpkg.cfg.d/docker-slim" <<'EOF'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/groff/*
path-exclude /usr/share/info/*
path-exclude /usr/share/lintian/*
path-exclude /usr/share/linda/*
path-exclude /usr/share/locale/*
EOF
  find "$rootfs/usr/share/doc" -mindepth 1 -not -name copyright -not -type d -delete
  find "$rootfs/usr/share/doc" -mindepth 1 -type d -empty -delete
  rm -rf "$rootfs"/usr/share/{man,info,groff,lintian,linda,locale}/* \
    "$rootfs"/var/cache/apt/*.bin "$rootfs"/var/cache/apt/archives/*.deb \
    "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/log/*.log "$rootfs"/var/log/apt/* \
    "$rootfs"/tmp/* "$rootfs"/root/.cache
  printf 'deb %s %s main\ndeb %s %s-updates main\n' "$mirror" "$suite" "$mirror" "$suite" \
    >"$rootfs/etc/apt/sources.list"
  : >"$rootfs/etc/machine-id"
  tar -C "$rootfs" --numeric-owner -cf "$rootfs_tar.tmp" . && mv "$rootfs_tar.tmp" "$rootfs_tar"
  log "cached Debian rootfs at $rootfs_tar ($(du -m "$rootfs_tar" | cut -f1) MB)"
fi

log "adding Node $node_version from $node_prefix, npm $(sed -n 's/^ *"version": *"\([^"]*\)".*/\1/p' "$npm_dir/package.json" | head -n1) from $npm_dir"
# The public image keeps Node under /usr/local; do the same so paths match.
install -D -m 0755 "$node_bin" "$rootfs/usr/local/bin/node"
mkdir -p "$rootfs/usr/local/lib/node_modules" "$rootfs/usr/local/include"
cp -a "$npm_dir" "$rootfs/usr/local/lib/node_modules/npm"
[ -d "$corepack_dir" ] && cp -a "$corepack_dir" "$rootfs/usr/local/lib/node_modules/"
[ -d "$node_prefix/include/node" ] && cp -a "$node_prefix/include/node" "$rootfs/usr/local/include/"
ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$rootfs/usr/local/bin/npm"
ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$rootfs/usr/local/bin/npx"
[ -d "$rootfs/usr/local/lib/node_modules/corepack" ] &&
  ln -sf ../lib/node_modules/corepack/dist/corepack.js "$rootfs/usr/local/bin/corepack"

# Run inside the rootfs with a clean environment (the host's NODE_* and friends stay out).
chroot_env() { env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root chroot "$rootfs" "$@"; }

# The public image's unprivileged user.
chroot_env groupadd --gid 1000 node
chroot_env useradd --uid 1000 --gid node --shell /bin/bash --create-home node

# It must run before it is worth importing.
chroot_env /usr/local/bin/node -e "process.exit(process.versions.node.startsWith('$major.') ? 0 : 1)"
chroot_env /usr/local/bin/npm --version >/dev/null

log "importing as $tag"
tar -C "$rootfs" --numeric-owner -c . | docker import \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change "ENV NODE_VERSION=${node_version#v}" \
  --change 'WORKDIR /' \
  --change 'CMD ["node"]' \
  --message "tailswarm offline base: debian $suite minbase + node $node_version (no registry)" \
  - "$tag" >/dev/null

size="$(docker image inspect -f '{{.Size}}' "$tag" | awk '{printf "%.0f MB", $1/1e6}')"
log "built $tag: $size in $(($(date +%s) - start)) s"
