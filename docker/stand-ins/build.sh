#!/usr/bin/env bash
# Builds local stand-ins for the official images that docker-compose.yml and the Dockerfile name, under the same
# names, from Debian packages: this machine (and CI's) reaches no image registry, only Debian's and npm's.
#   bash docker/stand-ins/build.sh            builds what is missing or out of date, keeps the rest
# Two minimal Debian roots (debootstrap --variant=minbase), cached as tarballs in STAND_IN_CACHE
# (/var/cache/petstore-ci) and imported as petstore-stand-in/debian:<suite>:
#   bookworm  postgres:15-alpine (Debian's postgresql-15), redis:7-alpine (redis-server 7.0),
#             node:24-bookworm-slim (the project's Node from node_modules, which npm ci brought, with this
#             machine's npm and CA bundle), axllent/mailpit (a
#             mail catcher of ours in Node with Mailpit's SMTP port and the part of its API the test uses)
#   forky     nginx:1.27-alpine (Debian's nginx from the testing suite: the upstream `resolve` parameter needs
#             1.27.3+, and bookworm and trixie have older ones)
# Each image carries the hash of its inputs (label petstore.stand-in.inputs): unchanged inputs, no rebuild.
# Each stand-in's Dockerfile says how it differs from the official image. Needs root (debootstrap) and dockerd.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
CACHE="${STAND_IN_CACHE:-/var/cache/petstore-ci}"
MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
mkdir -p "$CACHE"

log() { printf 'stand-ins: %s\n' "$*"; }

# petstore-stand-in/debian:<suite> from the cached minbase tarball (debootstrapped once).
base_image() {
  local suite="$1" tag="petstore-stand-in/debian:$1" tarball="$CACHE/debian-$1-minbase.tar"
  if [ ! -s "$tarball" ]; then
    command -v debootstrap >/dev/null 2>&1 || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null; }
    local script=""
    # An older debootstrap may not know the newest suite's name: Debian's newer suites share sid's script.
    [ -e "/usr/share/debootstrap/scripts/$suite" ] || script=/usr/share/debootstrap/scripts/sid
    local root
    root="$(mktemp -d)"
    log "debootstrap $suite (minbase) into $root"
    debootstrap --variant=minbase "$suite" "$root" "$MIRROR" $script >"$CACHE/debootstrap-$suite.log" 2>&1 \
      || { tail -20 "$CACHE/debootstrap-$suite.log"; exit 1; }
    rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/* "$root"/var/log/*.log "$root"/var/log/apt/*
    tar -C "$root" -cf "$tarball.partial" . && mv "$tarball.partial" "$tarball"
    rm -rf "$root"
    docker image rm -f "$tag" >/dev/null 2>&1 || true
  fi
  if ! docker image inspect "$tag" >/dev/null 2>&1; then
    log "import $tarball as $tag"
    docker import -c 'CMD ["bash"]' "$tarball" "$tag" >/dev/null
  fi
}

# stand_in NAME DIR [extra files...]: docker build of DIR (plus extra files copied into its context) as NAME,
# unless NAME already carries the same inputs' hash.
stand_in() {
  local name="$1" dir="$2"
  shift 2
  local context
  context="$(mktemp -d)"
  cp -a "$dir"/. "$context"/
  for extra in "$@"; do cp -a "$extra" "$context"/; done
  local from inputs
  from="$(sed -n 's/^FROM \([^ ]*\).*/\1/p' "$dir/Dockerfile" | head -1)"
  inputs="$( (docker image inspect -f '{{.Id}}' "$from"; cd "$context" && find . -type f -print0 | sort -z | xargs -0 sha256sum) | sha256sum | cut -c1-16)"
  if [ "$(docker image inspect -f '{{index .Config.Labels "petstore.stand-in.inputs"}}' "$name" 2>/dev/null || true)" = "$inputs" ]; then
    log "$name is up to date"
  else
    log "build $name"
    # Quiet unless it fails (the CLI's notice that the classic builder is deprecated included).
    docker build --label "petstore.stand-in.inputs=$inputs" -t "$name" "$context" >"$context.log" 2>&1 \
      || { tail -40 "$context.log"; rm -f "$context.log"; exit 1; }
    rm -f "$context.log"
  fi
  rm -rf "$context"
}

# The project's Node (node_modules/.bin/node: the binary npm ci brought, which npm start and the tests run on, and
# the image copies over its base's), with this machine's npm, goes into the node stand-in.
node_dist() {
  local out="$1" node npm_dir
  node="$(readlink -f "$HERE/../../node_modules/.bin/node" || true)"
  [ -x "$node" ] || { echo "stand-ins: no project Node in node_modules/.bin/node: run npm ci first" >&2; exit 1; }
  case "$("$node" -v)" in v24.*) ;; *) echo "stand-ins: the node stand-in is node:24, the project's Node is $("$node" -v)" >&2; exit 1 ;; esac
  npm_dir="$(cd "$(dirname "$(readlink -f "$(command -v npm)")")/.." && pwd)"
  mkdir -p "$out/bin" "$out/lib/node_modules"
  cp "$node" "$out/bin/node"
  cp -a "$npm_dir" "$out/lib/node_modules/npm"
  # The CAs this machine trusts: its way to the npm registry may go through a TLS-inspecting proxy.
  cp "${NODE_EXTRA_CA_CERTS:-/etc/ssl/certs/ca-certificates.crt}" "$out/ca-certificates.crt"
}

base_image bookworm
base_image forky
dist="$(mktemp -d)"
trap 'rm -rf "$dist"' EXIT
node_dist "$dist/node-dist"
stand_in node:24-bookworm-slim "$HERE/node" "$dist/node-dist"
stand_in postgres:15-alpine "$HERE/postgres"
stand_in redis:7-alpine "$HERE/redis"
stand_in nginx:1.27-alpine "$HERE/nginx"
stand_in axllent/mailpit:v1.29.5 "$HERE/mailpit"
# Stand-ins replaced by a rebuild leave their old layers untagged: drop those.
docker image prune -f --filter label=petstore.stand-in.inputs >/dev/null
