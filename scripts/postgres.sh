#!/usr/bin/env bash
# A Postgres for ttt-server on this machine, from Debian's `postgresql`
# package, no Docker: its data in DIR (default ./pg), listening only on a
# Unix socket in DIR, with a database `ttt` for the user `ttt`.
#
#   scripts/postgres.sh start [DIR]   # initdb the first time, start; prints the --database URL
#   scripts/postgres.sh stop [DIR]    # a clean stop
#   scripts/postgres.sh url [DIR]     # the --database URL
#
# Run as root, Postgres runs as the `postgres` user (it refuses root), which
# must be able to reach DIR (a checkout under /root is not: pick a DIR that is).
set -euo pipefail

cmd=${1:-start}
dir=$(realpath -m "${2:-pg}")
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)
if [ -z "$bin" ] || [ ! -x "$bin/initdb" ]; then
  echo "Postgres is not installed: apt-get install postgresql" >&2
  exit 1
fi
as() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}
url="postgres://ttt@/ttt?host=$dir&port=5432"

case "$cmd" in
  start)
    if [ ! -f "$dir/data/PG_VERSION" ]; then
      mkdir -p "$dir"
      if [ "$(id -u)" = 0 ]; then chown postgres "$dir"; fi
      as "$bin/initdb" -D "$dir/data" -A trust -U ttt -E UTF8 --locale C >/dev/null
    fi
    if ! as "$bin/pg_ctl" -D "$dir/data" status >/dev/null 2>&1; then
      as "$bin/pg_ctl" -D "$dir/data" -l "$dir/log" -w \
        -o "-k $dir -c listen_addresses= -c max_connections=200" start >/dev/null
    fi
    as "$bin/createdb" -h "$dir" -U ttt ttt 2>/dev/null || true
    echo "$url"
    ;;
  stop)
    as "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null
    ;;
  url)
    echo "$url"
    ;;
  *)
    echo "usage: $0 start|stop|url [DIR]" >&2
    exit 2
    ;;
esac
