#!/usr/bin/env bash
# The compose test: docker-compose.yml started on this machine's Docker engine and attacked through the balancer
# (test/system/compose-up.e2e-spec.ts), with each Compose in COMPOSE_VERSIONS ("v2" by default: `docker compose`; "v2 v1"
# adds Debian's docker-compose 1.29, whose run still fails the gateway-kill check: docs/operations.md, "The compose
# test"). CI runs it (.ci/run); by hand: bash docker/compose-test.sh (as root).
#   1. Compose and the engine: Debian's docker.io and docker-compose (1.29) when absent; Compose v2 (the CLI plugin)
#      from Debian's docker-compose 2.x package of trixie when `docker compose` is absent (bookworm has none);
#      dockerd started when none answers (overlay2, else vfs), and stopped again at the end.
#   2. The stand-ins for the official base images (docker/stand-ins/build.sh; no image registry is reachable here),
#      built once and kept in the engine's image store, their Debian roots cached in /var/cache/petstore-ci.
#   3. The test, once per Compose. Whatever happens, nothing of a test project is left: containers, volumes, networks.
set -euo pipefail
cd "$(dirname "$0")/.."
PROJECT_PREFIX=petstore-compose-test-

say() { printf 'compose-test: %s\n' "$*"; }
seconds() { echo $(( $(date +%s) - $1 )); }

# --- Compose and the engine -------------------------------------------------------------------------------------
bash docker/install-compose.sh

DOCKERD_PID=""
cleanup() {
  local status=$?
  # Any test project left (a test killed half-way): its containers, volumes and networks.
  if docker info >/dev/null 2>&1; then
    for project in $(docker ps -a --format '{{.Label "com.docker.compose.project"}}' | grep "^$PROJECT_PREFIX" | sort -u); do
      say "removing what project $project left"
      docker ps -a -q --filter "label=com.docker.compose.project=$project" | xargs -r docker rm -f -v >/dev/null
    done
    docker volume ls -q | grep "^$PROJECT_PREFIX" | xargs -r docker volume rm -f >/dev/null || true
    docker network ls --format '{{.Name}}' | grep "^$PROJECT_PREFIX" | xargs -r docker network rm >/dev/null || true
  fi
  if [ -n "$DOCKERD_PID" ]; then
    say "stopping the dockerd this script started ($DOCKERD_PID)"
    kill "$DOCKERD_PID" 2>/dev/null || true
    for _ in $(seq 1 30); do kill -0 "$DOCKERD_PID" 2>/dev/null || break; sleep 1; done
  fi
  exit $status
}
trap cleanup EXIT
# Stopped by a signal (CI stopping it after a failed step): through exit, so that the clean-up above runs.
trap 'exit 143' TERM INT

start_dockerd() {
  # A session of its own: a signal to this script's process group (CI stopping it, timeout(1) forwarding one)
  # must leave the engine to the clean-up below, which still needs it to remove the test's containers.
  setsid dockerd "$@" >>/var/log/petstore-dockerd.log 2>&1 &
  DOCKERD_PID=$!
  for _ in $(seq 1 60); do
    docker info >/dev/null 2>&1 && return 0
    kill -0 "$DOCKERD_PID" 2>/dev/null || break
    sleep 1
  done
  kill "$DOCKERD_PID" 2>/dev/null || true
  wait "$DOCKERD_PID" 2>/dev/null || true
  DOCKERD_PID=""
  return 1
}
if ! docker info >/dev/null 2>&1; then
  say "starting dockerd (log: /var/log/petstore-dockerd.log)"
  start_dockerd || { say "dockerd did not start with overlay2; trying vfs"; start_dockerd --storage-driver=vfs; } \
    || { tail -20 /var/log/petstore-dockerd.log; say "no Docker engine could be started"; exit 1; }
fi
say "engine $(docker version -f '{{.Server.Version}}') ($(docker info -f '{{.Driver}}')), $(docker compose version --short 2>/dev/null | sed 's/^/Compose v2 /'), $(docker-compose version --short 2>/dev/null | sed 's/^/docker-compose /')"

# --- the stand-ins -------------------------------------------------------------------------------------------------
started=$(date +%s)
bash docker/stand-ins/build.sh
say "stand-in base images ready in $(seconds "$started") s"

# --- the test, with each Compose -----------------------------------------------------------------------------------
for version in ${COMPOSE_VERSIONS:-v2}; do
  case "$version" in
    v2) command="docker compose" ;;
    v1) command="docker-compose" ;;
    *) say "COMPOSE_VERSIONS: unknown version $version (v2 or v1)"; exit 1 ;;
  esac
  started=$(date +%s)
  say "test with $command"
  # COMPOSE_KILL_STRICT=1 (the default): a GET lost on the gateway kill fails the test; 0 only counts and prints
  # nginx's 504s (for investigating a balancer change: docs/operations.md, "The compose test").
  # An image tag per Compose: BuildKit (v2) and the classic builder (1.29) keep separate caches, and a tag the other
  # took over leaves the older image dangling, where the stand-ins' prune removed it with its layers (1.29 then
  # rebuilt from nothing on every run: 107-294 s, against seconds from its cache).
  PETSTORE_TAG="compose-test-$version" \
  COMPOSE_KILL_STRICT="${COMPOSE_KILL_STRICT:-1}" COMPOSE_UP_TEST=1 COMPOSE_COMMAND="$command" timeout 2400 npx --no-install jest --selectProjects system \
    --runTestsByPath test/system/compose-up.e2e-spec.ts --runInBand
  say "test with $command: $(seconds "$started") s"
done
