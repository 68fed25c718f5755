#!/usr/bin/env bash
# Measures ttt-server against a bare tokio-tungstenite relay with the same
# frame pattern, on this machine, and prints one table (and with
# --update-readme, writes it into README.md's Performance section).
#
# The target (relay, then server) runs pinned to core 0, the load generator to
# core 1. Environment: SECS (10), PAIRS (200), RATE (10000), IDLE (19500),
# SERVER_FLAGS (extra ttt-server flags).
set -euo pipefail
cd "$(dirname "$0")/.."
SECS=${SECS:-10}
PAIRS=${PAIRS:-200}
RATE=${RATE:-10000}
IDLE=${IDLE:-19500}
SERVER_FLAGS=${SERVER_FLAGS:-}
UPDATE_README=0
[ "${1:-}" = "--update-readme" ] && UPDATE_README=1

cargo build --release -q -p tictactoe-server -p tictactoe-tests --bin ttt-server --bin loadgen
BIN=target/release
# Each side holds ~19,000 sockets: raise the soft open-file limit to the hard one.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
if [ "$(nproc)" -ge 2 ] && command -v taskset >/dev/null; then
  ON_SERVER="taskset -c 0"; ON_LOAD="taskset -c 1"
else
  ON_SERVER=""; ON_LOAD=""
fi
work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT INT TERM

# Starts a target in the background; prints its address once it listens.
start() {
  local log=$1; shift
  $ON_SERVER "$@" >"$log" 2>&1 &
  pids+=($!)
  echo "$!" >"$log.pid"
  for _ in $(seq 100); do
    addr=$(grep -oE '(addr=|listening on )[0-9.]+:[0-9]+' "$log" | grep -oE '[0-9.]+:[0-9]+' | head -1 || true)
    [ -n "$addr" ] && { echo "$addr"; return; }
    sleep 0.1
  done
  echo "target did not start: $(cat "$log")" >&2; exit 1
}
field() { grep -oE "$1=[0-9]+" "$2" | tail -1 | cut -d= -f2; }

echo "== baseline relay (closed loop, $PAIRS pairs, ${SECS}s)"
addr=$(start "$work/relay.log" $BIN/loadgen --serve-baseline 127.0.0.1:0)
$ON_LOAD $BIN/loadgen --url "ws://$addr/" --baseline --pairs "$PAIRS" --secs "$SECS" | tee "$work/relay.out"
kill "$(cat "$work/relay.log.pid")"

echo "== ttt-server: $IDLE idle connections on a fresh server (RSS), then paced at $RATE moves/s with them open"
addr=$(start "$work/server.log" $BIN/ttt-server --bind 127.0.0.1:0 --max-messages-per-second 0 --turn-timeout-ms 0 --max-connections 19990 $SERVER_FLAGS)
spid=$(cat "$work/server.log.pid")
$ON_LOAD $BIN/loadgen --url "ws://$addr/" --idle "$IDLE" --server-pid "$spid" --secs $((SECS + 30)) >"$work/idle.out" 2>&1 &
idle_pid=$!; pids+=($idle_pid)
for _ in $(seq 600); do grep -q summary "$work/idle.out" && break; sleep 0.1; done
cat "$work/idle.out"
$ON_LOAD $BIN/loadgen --url "ws://$addr/" --pairs "$PAIRS" --secs "$SECS" --rate "$RATE" | tee "$work/paced.out"
kill "$idle_pid" 2>/dev/null || true
wait "$idle_pid" 2>/dev/null || true
if grep -q "open-file limit" "$work/server.log"; then echo "server log: $(grep -m1 'open-file limit' "$work/server.log")"; fi

echo "== ttt-server (closed loop, $PAIRS pairs, ${SECS}s)"
$ON_LOAD $BIN/loadgen --url "ws://$addr/" --pairs "$PAIRS" --secs "$SECS" | tee "$work/server.out"

echo "== ttt-server (closed loop, $PAIRS pairs, ${SECS}s, 10x10 boards: few game ends per move)"
$ON_LOAD $BIN/loadgen --url "ws://$addr/" --pairs "$PAIRS" --secs "$SECS" --size 10 | tee "$work/wide.out"

r=$(field moves_per_sec "$work/relay.out")
ratio_of() { awk -v s="$(field moves_per_sec "$1")" -v r="$r" 'BEGIN { printf "%.2f", (r > 0 ? s / r : 0) }'; }
ratio=$(ratio_of "$work/server.out")
ratio_wide=$(ratio_of "$work/wide.out")
row() { printf '| %s | %s | %s | %s | %s | %s | %s |\n' "$1" "$(field moves_per_sec "$2")" "$(field p50_us "$2")" "$(field p99_us "$2")" "$(field p999_us "$2")" "$(field max_us "$2")" "$(field errors "$2")"; }
table=$(
  echo "Machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -sr); target on core 0, load on core 1."
  echo "Command: \`SECS=$SECS PAIRS=$PAIRS RATE=$RATE IDLE=$IDLE scripts/bench.sh\`"
  echo
  echo "| run | moves/s | p50 µs | p99 µs | p99.9 µs | max µs | errors |"
  echo "|---|---:|---:|---:|---:|---:|---:|"
  row "baseline relay, closed loop, $PAIRS pairs" "$work/relay.out"
  row "ttt-server, closed loop, $PAIRS pairs, 3×3" "$work/server.out"
  row "ttt-server, closed loop, $PAIRS pairs, 10×10" "$work/wide.out"
  row "ttt-server, paced $RATE/s, $((IDLE + 2 * PAIRS)) connections open" "$work/paced.out"
  echo
  echo "ttt-server / baseline relay: **$ratio** of the relay's moves/s on 3×3 (a game_over, two rematch requests, a rematch_offered and two game_started every ~7.6 moves: ~30% more frames than the relay moves), **$ratio_wide** on 10×10 (game ends rare). Every game record judged consistent."
  echo "Idle: $(field idle "$work/idle.out") connections cost $(field rss_per_conn_bytes "$work/idle.out") bytes of server RSS each."
)
echo
echo "$table"
if [ "$UPDATE_README" = 1 ]; then
  python3 - "$table" <<'PY'
import re, sys
readme = open("README.md").read()
block = "<!-- bench:start -->\n" + sys.argv[1] + "\n<!-- bench:end -->"
readme = re.sub(r"<!-- bench:start -->.*?<!-- bench:end -->", lambda _: block, readme, flags=re.S)
open("README.md", "w").write(readme)
PY
  echo "README.md updated."
fi
