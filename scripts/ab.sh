#!/usr/bin/env bash
# Compares two ttt-server builds: usage `scripts/ab.sh OLD_BINARY NEW_BINARY`.
#
# Both servers run at the same time pinned to core 0, each loaded by its own
# closed-loop loadgen on core 1, so that the machine's drift (tens of percent
# between runs on a shared VM) hits both alike. Prints NEW/OLD moves/s per
# round and the median. Environment: ROUNDS (4), SECS (5), PAIRS (200), SIZE (10).
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -eq 2 ] || { echo "usage: $0 OLD_BINARY NEW_BINARY" >&2; exit 2; }
OLD=$1; NEW=$2
ROUNDS=${ROUNDS:-4}; SECS=${SECS:-5}; PAIRS=${PAIRS:-200}; SIZE=${SIZE:-10}
cargo build --release -q -p tictactoe-tests --bin loadgen
LOADGEN=target/release/loadgen
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
work=$(mktemp -d)
pids=()
# Targets are started inside $(...), a subshell: they leave their pid in a file.
cleanup() {
  for p in "${pids[@]}" $(cat "$work"/*.pid 2>/dev/null); do kill "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT INT TERM

# Starts a server in the background; prints its address once it listens.
start() {
  local log=$1 bin=$2
  taskset -c 0 "$bin" --bind 127.0.0.1:0 --max-messages-per-second 0 --turn-timeout-ms 0 >"$log" 2>&1 &
  echo "$!" >"$log.pid"
  for _ in $(seq 100); do
    addr=$(grep -oE 'addr=[0-9.]+:[0-9]+' "$log" | head -1 | cut -d= -f2 || true)
    [ -n "$addr" ] && { echo "$addr"; return; }
    sleep 0.1
  done
  echo "server did not start: $(cat "$log")" >&2; exit 1
}
load() { taskset -c 1 $LOADGEN --url "ws://$1/" --size "$SIZE" --pairs "$PAIRS" --secs "$SECS"; }
rate() { grep -oE 'moves_per_sec=[0-9]+' "$1" | cut -d= -f2; }

old=$(start "$work/old.log" "$OLD")
new=$(start "$work/new.log" "$NEW")
for r in $(seq "$ROUNDS"); do
  load "$old" >"$work/old.$r.out" & a=$!
  load "$new" >"$work/new.$r.out" & b=$!
  wait "$a" "$b"
  echo "round $r: old $(rate "$work/old.$r.out") new $(rate "$work/new.$r.out") moves/s"
done
python3 - "$work" "$ROUNDS" <<'PY'
import re, statistics, sys
work, rounds = sys.argv[1], int(sys.argv[2])
rate = lambda p: int(re.search(r"moves_per_sec=(\d+)", open(p).read()).group(1))
ratios = [rate(f"{work}/new.{r}.out") / max(rate(f"{work}/old.{r}.out"), 1) for r in range(1, rounds + 1)]
print(f"new/old: {', '.join(f'{x:.3f}' for x in ratios)}; median {statistics.median(ratios):.3f}")
PY
