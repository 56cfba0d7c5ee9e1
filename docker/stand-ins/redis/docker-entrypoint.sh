#!/bin/sh
# As the official image's entrypoint: redis-server runs as the redis user, with /data its own; protected mode off
# unless the arguments say otherwise (the official image compiles it off).
set -e
if [ "$1" = "redis-server" ]; then
  case " $* " in *" --protected-mode "*) ;; *) set -- "$@" --protected-mode no ;; esac
  if [ "$(id -u)" = "0" ]; then
    find . \! -user redis -exec chown redis '{}' +
    exec setpriv --reuid=redis --regid=redis --init-groups "$@"
  fi
fi
exec "$@"
