#!/usr/bin/env bash
# A cluster of ttt-server instances on this machine, from Debian's
# `postgresql`, `redis-server` and `haproxy` packages, no Docker: one
# Postgres and one Redis (Unix sockets in DIR), N instances on loopback
# ports, and HAProxy in front of them: the one address players use. Prints
# every address, then waits, saying when an instance (or the balancer)
# dies; Ctrl-C stops them all (the instances first, with SIGTERM, so that
# their games are handed over and saved).
#
#   scripts/cluster.sh [N] [DIR] [-- FLAGS]   # N instances (default 2), state in DIR (default ./cluster)
#
# Run as root, Postgres runs as the `postgres` user, which must be able to
# reach DIR (a checkout under /root is not: pick a DIR that is, e.g. /tmp/ttt).
#
# Environment: PORT (the balancer's port, the players' one address, default
# 8080; the instances' ports follow it) and TTT_SERVER (a ttt-server
# binary; default: built with cargo --release). FLAGS go to every instance.
# The balancer's configuration is scripts/haproxy.cfg (written to
# DIR/haproxy.cfg with the addresses filled in; its log is DIR/haproxy.log).
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
haproxy=$(command -v haproxy || echo /usr/sbin/haproxy)
[ -x "$haproxy" ] || { echo "HAProxy is not installed: apt-get install haproxy" >&2; exit 1; }
mkdir -p "$dir"
if [ -z "${TTT_SERVER:-}" ]; then
  cargo build --release -q -p tictactoe-server --bin ttt-server
  TTT_SERVER=target/release/ttt-server
fi

pids=()
declare -A names=()  # each instance's pid -> its name
stop() {
  trap - INT TERM EXIT
  if [ -n "${lb_pid:-}" ]; then kill "$lb_pid" 2>/dev/null || true; wait "$lb_pid" 2>/dev/null || true; fi
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  if [ -n "${redis_pid:-}" ]; then kill "$redis_pid" 2>/dev/null || true; wait "$redis_pid" 2>/dev/null || true; fi
  scripts/postgres.sh stop "$dir/pg" || true
  echo "stopped"
  exit 0
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
servers=""
for i in $(seq 1 "$n"); do
  p=$((port + i))
  "$TTT_SERVER" --bind "127.0.0.1:$p" --database "$database" --redis "$redis" --instance "i$i" \
    --spill-dir "$dir" "${extra[@]}" >"$dir/i$i.log" 2>&1 &
  pids+=($!)
  names[$!]="i$i"
  servers+="    server i$i 127.0.0.1:$p check"$'\n'
  echo "instance i$i: ws://127.0.0.1:$p/  (pid $!, http://127.0.0.1:$p/healthz, log $dir/i$i.log)"
done
cfg=$(<scripts/haproxy.cfg)
cfg=${cfg//@BIND@/127.0.0.1:$port}
printf '%s\n' "${cfg//@SERVERS@/${servers%$'\n'}}" >"$dir/haproxy.cfg"
"$haproxy" -db -f "$dir/haproxy.cfg" >"$dir/haproxy.log" 2>&1 &
lb_pid=$!
echo "players:    ws://127.0.0.1:$port/  (the one address: HAProxy in front of the instances, log $dir/haproxy.log)"
echo "Ctrl-C stops them all."

# Say when an instance dies: its players come back through the balancer,
# and another instance adopts its games within seconds.
while [ "${#names[@]}" -gt 0 ] || [ -n "${lb_pid:-}" ]; do
  status=0
  wait -n -p gone "${!names[@]}" ${lb_pid:+"$lb_pid"} || status=$?
  [ -n "${gone:-}" ] || continue
  how="exit status $status"
  [ "$status" -gt 128 ] && how="killed by signal $((status - 128))"
  if [ "$gone" = "${lb_pid:-}" ]; then
    echo "$(date -u +%T) the balancer (HAProxy, pid $gone) died ($how): players cannot reach the cluster; see $dir/haproxy.log" >&2
    lb_pid=""
  else
    name=${names[$gone]}
    unset "names[$gone]"
    echo "$(date -u +%T) instance $name (pid $gone) died ($how); see $dir/$name.log." \
      "Its players reconnect through ws://127.0.0.1:$port/ and resume on another instance, which adopts its games within ~5 s." >&2
  fi
  gone=""
done
