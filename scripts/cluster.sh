#!/usr/bin/env bash
# A cluster of ttt-server instances on this machine, from Debian's
# `postgresql` and `redis-server` packages, no Docker: one Postgres and one
# Redis (Unix sockets in DIR), and N instances on loopback ports. Prints
# every address, then waits; Ctrl-C stops them all (the instances first,
# with SIGTERM, so that their games are handed over and saved).
#
#   scripts/cluster.sh [N] [DIR] [-- FLAGS]   # N instances (default 2), state in DIR (default ./cluster)
#
# Run as root, Postgres runs as the `postgres` user, which must be able to
# reach DIR (a checkout under /root is not: pick a DIR that is, e.g. /tmp/ttt).
#
# Environment: PORT (the first instance's port, default 8080; the others
# follow) and TTT_SERVER (a ttt-server binary; default: built with cargo
# --release). FLAGS go to every instance.
set -euo pipefail
cd "$(dirname "$0")/.."

args=()
extra=()
while [ $# -gt 0 ]; do
  if [ "$1" = "--" ]; then shift; extra=("$@"); break; fi
  args+=("$1")
  shift
done
n=${args[0]:-2}
dir=$(realpath -m "${args[1]:-cluster}")
port=${PORT:-8080}

command -v redis-server >/dev/null || { echo "Redis is not installed: apt-get install redis-server" >&2; exit 1; }
mkdir -p "$dir"
if [ -z "${TTT_SERVER:-}" ]; then
  cargo build --release -q -p tictactoe-server --bin ttt-server
  TTT_SERVER=target/release/ttt-server
fi

pids=()
stop() {
  trap - INT TERM EXIT
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  [ -n "${redis_pid:-}" ] && kill "$redis_pid" 2>/dev/null && wait "$redis_pid" 2>/dev/null
  scripts/postgres.sh stop "$dir/pg" || true
  echo "stopped"
}
trap stop INT TERM EXIT

database=$(scripts/postgres.sh start "$dir/pg")
redis-server --port 0 --save '' --appendonly no --unixsocket "$dir/redis.sock" --unixsocketperm 700 \
  --dir "$dir" >"$dir/redis.log" 2>&1 &
redis_pid=$!
for _ in $(seq 100); do [ -S "$dir/redis.sock" ] && break; sleep 0.05; done
redis="redis+unix://$dir/redis.sock"

echo "postgres: $database"
echo "redis:    $redis"
for i in $(seq 1 "$n"); do
  p=$((port + i - 1))
  "$TTT_SERVER" --bind "127.0.0.1:$p" --database "$database" --redis "$redis" --instance "i$i" \
    --spill-dir "$dir" "${extra[@]}" >"$dir/i$i.log" 2>&1 &
  pids+=($!)
  echo "instance i$i: ws://127.0.0.1:$p/  (http://127.0.0.1:$p/healthz, log $dir/i$i.log)"
done
echo "Ctrl-C stops them all."
wait
