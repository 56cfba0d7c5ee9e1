#!/usr/bin/env bash
# Installs what running docker-compose.yml here takes, when absent (idempotent; as root): Debian's docker.io (the
# engine, dockerd), docker-compose (1.29, bookworm's), debootstrap (for docker/stand-ins/build.sh), and Compose v2:
# Debian ships it as the package docker-compose from trixie on (the name bookworm's 1.29 has), so its CLI plugin
# alone (one Go binary) is taken from trixie's package through an apt list of its own, cached in
# /var/cache/petstore-ci, and installed as /usr/local/lib/docker/cli-plugins/docker-compose. Starts nothing.
set -euo pipefail
CACHE="${STAND_IN_CACHE:-/var/cache/petstore-ci}"
mkdir -p "$CACHE"
say() { printf 'install-compose: %s\n' "$*"; }

missing=()
command -v dockerd >/dev/null 2>&1 || missing+=(docker.io)
command -v docker-compose >/dev/null 2>&1 || missing+=(docker-compose)
command -v debootstrap >/dev/null 2>&1 || missing+=(debootstrap)
if [ ${#missing[@]} -gt 0 ]; then
  say "installing ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

if ! docker compose version >/dev/null 2>&1; then
  plugin="$CACHE/docker-compose-v2"
  if [ ! -x "$plugin" ]; then
    say "fetching the Compose v2 plugin from Debian's docker-compose package (trixie)"
    work="$(mktemp -d)"
    mkdir -p "$work/lists/partial" "$work/cache/archives/partial"
    echo "deb ${DEBIAN_MIRROR:-http://deb.debian.org/debian} trixie main" >"$work/sources.list"
    apt_own=(-o "Dir::Etc::SourceList=$work/sources.list" -o Dir::Etc::SourceParts=/dev/null -o "Dir::State::Lists=$work/lists"
      -o "Dir::Cache=$work/cache" -o Acquire::Check-Valid-Until=false -o APT::Sandbox::User=root)
    apt-get "${apt_own[@]}" update -qq
    (cd "$work" && apt-get "${apt_own[@]}" download docker-compose >/dev/null)
    dpkg-deb -x "$work"/docker-compose_*.deb "$work/root"
    install -m 0755 "$work/root/usr/libexec/docker/cli-plugins/docker-compose" "$plugin"
    rm -rf "$work"
  fi
  install -D -m 0755 "$plugin" /usr/local/lib/docker/cli-plugins/docker-compose
fi
