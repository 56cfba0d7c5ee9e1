#!/bin/sh
# The official postgres entrypoint's core: as root, own PGDATA and drop to postgres; on an empty PGDATA, initdb with
# POSTGRES_USER / POSTGRES_PASSWORD, create POSTGRES_DB, accept passwords from other hosts; then exec the server.
set -e
if [ "$1" = "postgres" ]; then
  if [ "$(id -u)" = "0" ]; then
    mkdir -p "$PGDATA" /var/run/postgresql
    chown -R postgres:postgres "$PGDATA" /var/run/postgresql
    chmod 700 "$PGDATA"
    exec setpriv --reuid=postgres --regid=postgres --init-groups "$0" "$@"
  fi
  if [ ! -s "$PGDATA/PG_VERSION" ]; then
    if [ -z "$POSTGRES_PASSWORD" ]; then
      echo 'Error: Database is uninitialized and superuser password is not specified. Set POSTGRES_PASSWORD.' >&2
      exit 1
    fi
    user="${POSTGRES_USER:-postgres}"
    db="${POSTGRES_DB:-$user}"
    pwfile="$(mktemp)"
    printf '%s\n' "$POSTGRES_PASSWORD" >"$pwfile"
    initdb -D "$PGDATA" --username="$user" --pwfile="$pwfile" --encoding=UTF8 --locale=C \
      --auth-local=trust --auth-host=scram-sha-256 >/dev/null
    rm -f "$pwfile"
    echo 'host all all all scram-sha-256' >>"$PGDATA/pg_hba.conf"
    echo "listen_addresses = '*'" >>"$PGDATA/postgresql.conf"
    if [ "$db" != "postgres" ]; then
      pg_ctl -D "$PGDATA" -o "-c listen_addresses=''" -w start >/dev/null
      psql -v ON_ERROR_STOP=1 -U "$user" -d postgres -qc "CREATE DATABASE \"$db\"" 
      pg_ctl -D "$PGDATA" -m fast -w stop >/dev/null
    fi
    echo "PostgreSQL init process complete; ready for start up."
  fi
fi
exec "$@"
