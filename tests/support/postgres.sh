#!/usr/bin/env bash
# Starts a throwaway PostgreSQL server for the tests (issue 44): a new cluster in a temporary
# directory, on loopback only, trust authentication for its one user, fsync off (a test
# database is thrown away). Prints the line `CAPA_TEST_POSTGRES=postgres://…` for the caller to
# export; `tests/support/postgres.sh stop DIR` stops it and removes the directory.
#
#   eval "$(tests/support/postgres.sh start)"    # exports CAPA_TEST_POSTGRES and CAPA_TEST_PGDATA
#   tests/support/postgres.sh stop "$CAPA_TEST_PGDATA"
#
# PostgreSQL refuses to run as root: as root the cluster belongs to the `postgres` user the
# Debian package makes. Port: $CAPA_TEST_PGPORT, else a free one.
set -euo pipefail

bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
if [ -z "$bin" ]; then
  echo "postgres.sh: PostgreSQL is not installed (apt-get install postgresql; scripts/setup --test does)" >&2
  exit 1
fi
as_owner() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

case "${1:-}" in
  start)
    port=${CAPA_TEST_PGPORT:-$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')}
    dir=$(mktemp -d "${TMPDIR:-/tmp}/capa-pg.XXXXXX")
    if [ "$(id -u)" = 0 ]; then chown postgres: "$dir"; fi
    as_owner "$bin/initdb" -D "$dir/data" -U postgres --auth=trust --no-instructions -E UTF8 >"$dir/initdb.log" 2>&1 ||
      { cat "$dir/initdb.log" >&2; exit 1; }
    as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -o \
      "-p $port -k $dir -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200" \
      start >/dev/null ||
      { cat "$dir/server.log" >&2; exit 1; }
    echo "export CAPA_TEST_POSTGRES=postgres://postgres@127.0.0.1:$port/postgres"
    echo "export CAPA_TEST_PGDATA=$dir"
    ;;
  stop)
    dir=${2:?usage: postgres.sh stop DIR}
    as_owner "$bin/pg_ctl" -D "$dir/data" -m immediate stop >/dev/null 2>&1 || true
    rm -rf "$dir"
    ;;
  *)
    echo "usage: postgres.sh start | stop DIR" >&2
    exit 2
    ;;
esac
