#!/usr/bin/env bash
# Measures ttt-server against a bare tokio-tungstenite relay with the same
# frame pattern, on this machine, and prints one table (and with
# --update-readme, writes it into README.md's Performance section).
#
# The targets (relay and server, each idle while the other is measured) run
# pinned to core 0, the load generator to core 1. The closed-loop runs
# alternate relay / server 3x3 / server 10x10 for ROUNDS rounds, and each
# ratio is the median of the rounds' ratios; the paced run is repeated too: on a shared VM the machine's speed
# drifts by tens of percent between runs, so one run of each is not a
# comparison. Besides moves/s, each closed-loop row gives the target's CPU time
# (user + system, from /proc) per move, which does not depend on whether the
# target or the load generator was the bottleneck. A second relay with the
# game server's tasks and queues measures what that data flow costs by itself.
# Last, RESTORE saved games are written into a fresh database and the server
# is started on it: how long until they are all open again.
# Environment: SECS (10), PAIRS (200), RATE (10000), IDLE (19500),
# ROUNDS (3), RESTORE (10000), SERVER_FLAGS (extra ttt-server flags).
set -euo pipefail
cd "$(dirname "$0")/.."
SECS=${SECS:-10}
PAIRS=${PAIRS:-200}
RATE=${RATE:-10000}
IDLE=${IDLE:-19500}
RESTORE=${RESTORE:-10000}
ROUNDS=${ROUNDS:-3}
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
# Targets are started inside $(...), a subshell: they leave their pid in a file.
cleanup() {
  for p in "${pids[@]}" $(cat "$work"/*.pid 2>/dev/null); do kill "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT INT TERM

# Starts a target in the background; prints its address once it listens.
start() {
  local log=$1; shift
  $ON_SERVER "$@" >"$log" 2>&1 &
  echo "$!" >"$log.pid"
  for _ in $(seq 100); do
    addr=$(grep -oE '(addr=|listening on )[0-9.]+:[0-9]+' "$log" | grep -oE '[0-9.]+:[0-9]+' | head -1 || true)
    [ -n "$addr" ] && { echo "$addr"; return; }
    sleep 0.1
  done
  echo "target did not start: $(cat "$log")" >&2; exit 1
}

echo "== ttt-server: $IDLE idle connections on a fresh server (RSS), then paced at $RATE moves/s with them open"
# The server as it ships: finished games and games in progress in SQLite.
addr=$(start "$work/server.log" $BIN/ttt-server --bind 127.0.0.1:0 --max-messages-per-second 0 --turn-timeout-ms 0 --max-connections 19990 --database "sqlite:$work/ttt.db" $SERVER_FLAGS)
spid=$(cat "$work/server.log.pid")
$ON_LOAD $BIN/loadgen --url "ws://$addr/" --idle "$IDLE" --server-pid "$spid" --secs $((ROUNDS * (SECS + 5) + 30)) >"$work/idle.out" 2>&1 &
idle_pid=$!; pids+=($idle_pid)
for _ in $(seq 600); do grep -q summary "$work/idle.out" && break; sleep 0.1; done
cat "$work/idle.out"
for r in $(seq "$ROUNDS"); do
  echo "== round $r/$ROUNDS: paced at $RATE moves/s"
  $ON_LOAD $BIN/loadgen --url "ws://$addr/" --pairs "$PAIRS" --secs "$SECS" --rate "$RATE" | tee "$work/paced.$r.out"
done
kill "$idle_pid" 2>/dev/null || true
wait "$idle_pid" 2>/dev/null || true
if grep -q "open-file limit" "$work/server.log"; then echo "server log: $(grep -m1 'open-file limit' "$work/server.log")"; fi

# Closed loop against the target with process id $1, output to $2; appends the
# target's CPU ticks (user + system) spent during the run.
closed() {
  local pid=$1 out=$2; shift 2
  local before after
  before=$(awk '{print $14 + $15}' "/proc/$pid/stat")
  $ON_LOAD $BIN/loadgen --pairs "$PAIRS" --secs "$SECS" "$@" | tee "$out"
  after=$(awk '{print $14 + $15}' "/proc/$pid/stat")
  echo "cpu: ticks=$((after - before)) hz=$(getconf CLK_TCK) secs=$SECS" >>"$out"
}

relay=$(start "$work/relay.log" $BIN/loadgen --serve-baseline 127.0.0.1:0)
# The closed-loop servers start fresh together, one as it ships (records and
# live games in SQLite), one with --database none: the store's cost is their
# difference, neither carrying the idle run's history.
db=$(start "$work/db.log" $BIN/ttt-server --bind 127.0.0.1:0 --max-messages-per-second 0 --turn-timeout-ms 0 --database "sqlite:$work/closed.db" $SERVER_FLAGS)
bare=$(start "$work/bare.log" $BIN/ttt-server --bind 127.0.0.1:0 --max-messages-per-second 0 --turn-timeout-ms 0 --database none $SERVER_FLAGS)
tasks=$(start "$work/tasks.log" $BIN/loadgen --serve-baseline 127.0.0.1:0 --tasks)
for r in $(seq "$ROUNDS"); do
  echo "== round $r/$ROUNDS: baseline relay, closed loop, $PAIRS pairs, ${SECS}s"
  closed "$(cat "$work/relay.log.pid")" "$work/relay.$r.out" --url "ws://$relay/" --baseline
  echo "== round $r/$ROUNDS: relay with the server's tasks and queues, closed loop, $PAIRS pairs, ${SECS}s"
  closed "$(cat "$work/tasks.log.pid")" "$work/tasks.$r.out" --url "ws://$tasks/" --baseline
  echo "== round $r/$ROUNDS: ttt-server, closed loop, $PAIRS pairs, ${SECS}s, 3x3"
  closed "$(cat "$work/db.log.pid")" "$work/server.$r.out" --url "ws://$db/"
  echo "== round $r/$ROUNDS: ttt-server, closed loop, $PAIRS pairs, ${SECS}s, 10x10 (few game ends per move)"
  closed "$(cat "$work/db.log.pid")" "$work/wide.$r.out" --url "ws://$db/" --size 10
  echo "== round $r/$ROUNDS: ttt-server --database none, closed loop, $PAIRS pairs, ${SECS}s, 3x3"
  closed "$(cat "$work/bare.log.pid")" "$work/server_none.$r.out" --url "ws://$bare/"
  echo "== round $r/$ROUNDS: ttt-server --database none, closed loop, $PAIRS pairs, ${SECS}s, 10x10"
  closed "$(cat "$work/bare.log.pid")" "$work/wide_none.$r.out" --url "ws://$bare/" --size 10
  # Both at once, each with its own load generator, as scripts/ab.sh does:
  # the machine's drift between runs then hits both alike.
  for size in 3 10; do
    echo "== round $r/$ROUNDS: the default database and --database none loaded at once, $PAIRS pairs each, ${SECS}s, ${size}x${size}"
    $ON_LOAD $BIN/loadgen --url "ws://$db/" --pairs "$PAIRS" --secs "$SECS" --size "$size" >"$work/at_once_db.$size.$r.out" &
    a=$!
    $ON_LOAD $BIN/loadgen --url "ws://$bare/" --pairs "$PAIRS" --secs "$SECS" --size "$size" >"$work/at_once_none.$size.$r.out" &
    b=$!
    wait "$a" "$b"
    grep -h summary "$work/at_once_db.$size.$r.out" "$work/at_once_none.$size.$r.out"
  done
done
python3 -c "import urllib.request,sys; sys.stdout.write(urllib.request.urlopen('http://$db/metrics').read().decode())" >"$work/metrics.txt"

echo "== restore: $RESTORE saved games, the server started on them"
# The schema comes from the server itself; the games are written straight into it.
start "$work/schema.log" $BIN/ttt-server --bind 127.0.0.1:0 --database "sqlite:$work/restore.db" >/dev/null
kill -TERM "$(cat "$work/schema.log.pid")"; while kill -0 "$(cat "$work/schema.log.pid")" 2>/dev/null; do sleep 0.05; done
python3 - "$work/restore.db" "$RESTORE" <<'PY'
import os, random, sqlite3, struct, sys, time
db, n = sqlite3.connect(sys.argv[1]), int(sys.argv[2])
now = int(time.time() * 1000)
with db:
    for i in range(n):
        room = f"R{i:09d}"
        db.execute("INSERT INTO live_games (room, game_id, size, win, turn_timeout_ms, x_name, x_account, x_bot, x_token,"
                   " o_name, o_account, o_bot, o_token, clock_left_ms, started_at) VALUES (?, ?, 3, 3, 30000, 'ann', NULL, 0, ?,"
                   " 'bob', NULL, 0, ?, 12000, ?)", (room, f"G{i:07d}", os.urandom(32), os.urandom(32), now))
        cells = random.sample(range(9), 3)
        db.execute("INSERT INTO live_moves (room, first, cells) VALUES (?, 0, ?)",
                   (room, b"".join(struct.pack("<HH", c // 3, c % 3) for c in cells)))
PY
t0=$(date +%s%N)
start "$work/restore.log" $BIN/ttt-server --bind 127.0.0.1:0 --database "sqlite:$work/restore.db" --reconnect-grace-ms 600000 >/dev/null
t1=$(date +%s%N)
echo "restore: listening $(( (t1 - t0) / 1000000 )) ms after start; $(grep -o 'games in progress restored.*' "$work/restore.log")" | tee "$work/restore.out"
kill -TERM "$(cat "$work/restore.log.pid")" 2>/dev/null || true

table=$(python3 - "$work" "$ROUNDS" "$SECS" "$PAIRS" "$RATE" "$IDLE" <<'PY'
import os, re, statistics, sys
work, rounds, secs, pairs, rate, idle = sys.argv[1], int(sys.argv[2]), *sys.argv[3:]
def last_summary(path):
    lines = [l for l in open(path) if l.startswith("summary:")]
    return {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", lines[-1])}
def cpu_us_per_move(path):
    summary = last_summary(path)
    cpu = {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", [l for l in open(path) if l.startswith("cpu:")][-1])}
    return cpu["ticks"] / cpu["hz"] * 1e6 / max(summary["moves_per_sec"] * cpu["secs"], 1)
runs = {kind: [last_summary(f"{work}/{kind}.{r}.out") for r in range(1, rounds + 1)]
        for kind in ("relay", "tasks", "server", "wide", "server_none", "wide_none", "paced")}
closed_kinds = ("relay", "tasks", "server", "wide", "server_none", "wide_none")
cpu = {kind: [cpu_us_per_move(f"{work}/{kind}.{r}.out") for r in range(1, rounds + 1)] for kind in closed_kinds}
def median_run(kind, key="moves_per_sec"):
    ordered = sorted(runs[kind], key=lambda f: f[key])
    return ordered[len(ordered) // 2]
def ratios(kind):
    return [s["moves_per_sec"] / max(r["moves_per_sec"], 1) for s, r in zip(runs[kind], runs["relay"])]
def row(label, f, kind=None):
    us = f"{statistics.median(cpu[kind]):.1f}" if kind else "–"
    return f"| {label} | {f['moves_per_sec']} | {us} | {f['p50_us']} | {f['p99_us']} | {f['p999_us']} | {f['max_us']} | {f['errors']} |"
cores = os.cpu_count()
mem = round(int(open("/proc/meminfo").read().split()[1]) / 1048576)
print(f"Machine: {cores} cores, {mem} GiB, {os.uname().sysname} {os.uname().release}; target on core 0, load on core 1.")
print(f"Command: `SECS={secs} PAIRS={pairs} RATE={rate} IDLE={idle} ROUNDS={rounds} scripts/bench.sh`")
print()
print(f"Each row is the median of {rounds} runs: closed-loop runs by moves/s (the relays, 3×3 and 10×10 alternating), paced runs by p99. "
      "CPU is the target's user + system time per move, median of the rounds.")
print()
print("| run | moves/s | CPU µs/move | p50 µs | p99 µs | p99.9 µs | max µs | errors |")
print("|---|---:|---:|---:|---:|---:|---:|---:|")
print(row(f"baseline relay, closed loop, {pairs} pairs", median_run("relay"), "relay"))
print(row(f"relay with the server's tasks and queues, closed loop, {pairs} pairs", median_run("tasks"), "tasks"))
print(row(f"ttt-server, closed loop, {pairs} pairs, 3×3", median_run("server"), "server"))
print(row(f"ttt-server, closed loop, {pairs} pairs, 10×10", median_run("wide"), "wide"))
print(row(f"ttt-server --database none, closed loop, {pairs} pairs, 3×3", median_run("server_none"), "server_none"))
print(row(f"ttt-server --database none, closed loop, {pairs} pairs, 10×10", median_run("wide_none"), "wide_none"))
print(row(f"ttt-server, paced {rate}/s, {int(idle) + 2 * int(pairs)} connections open", median_run("paced", "p99_us")))
print()
fmt = lambda xs: ", ".join(f"{x:.2f}" for x in xs)
wide, narrow, tasks = ratios("wide"), ratios("server"), ratios("tasks")
cpu_ratio = lambda kind: statistics.median(r / max(k, 1e-9) for r, k in zip(cpu["relay"], cpu[kind]))
print(f"ttt-server / baseline relay, median of the rounds' ratios: **{statistics.median(wide):.2f}** on 10×10 "
      f"(the relay's frame pattern: one move in, two `moved` out; rounds {fmt(wide)}), "
      f"**{statistics.median(narrow):.2f}** on 3×3 (rounds {fmt(narrow)}; a game_over, two rematch requests, "
      "a rematch_offered and two game_started every ~7.6 moves: ~30% more frames than the relay moves). "
      "Every game record judged consistent.")
print(f"The relay with the server's tasks and queues does **{statistics.median(tasks):.2f}** of the bare relay's moves/s "
      f"(rounds {fmt(tasks)}). By CPU time per move (relay's / target's, median of the rounds): tasks relay "
      f"{cpu_ratio('tasks'):.2f}, ttt-server **{cpu_ratio('wide'):.2f}** on 10×10 and {cpu_ratio('server'):.2f} on 3×3.")
wide_none, narrow_none = ratios("wide_none"), ratios("server_none")
at_once = lambda size: [last_summary(f"{work}/at_once_db.{size}.{r}.out")["moves_per_sec"]
                        / max(last_summary(f"{work}/at_once_none.{size}.{r}.out")["moves_per_sec"], 1) for r in range(1, rounds + 1)]
print(f"The default database against `--database none`, both loaded at once (closed loop, {pairs} pairs each), moves/s ratio, "
      f"median of the rounds: **{statistics.median(at_once(3)):.3f}** on 3×3 (rounds {fmt(at_once(3))}), "
      f"**{statistics.median(at_once(10)):.3f}** on 10×10 (rounds {fmt(at_once(10))}).")
print(f"With every game recorded and every move saved in SQLite (the default) against `--database none`, ratio to the relay: "
      f"**{statistics.median(wide):.2f}** vs {statistics.median(wide_none):.2f} on 10×10, "
      f"**{statistics.median(narrow):.2f}** vs {statistics.median(narrow_none):.2f} on 3×3 "
      f"(the store costs {100 * (1 - statistics.median(narrow) / max(statistics.median(narrow_none), 1e-9)):.1f}% on 3×3, "
      f"{100 * (1 - statistics.median(wide) / max(statistics.median(wide_none), 1e-9)):.1f}% on 10×10).")
text = open(f"{work}/metrics.txt").read()
metrics = dict(re.findall(r"^(ttt_store_\w+) (\S+)$", text, re.M))
durable = dict(re.findall(r'^ttt_move_durable_seconds\{quantile="([\d.]+)"\} (\S+)$', text, re.M))
ms = lambda q: f"{1000 * float(durable[q]):.1f}" if q in durable else "?"
print(f"Durability (accepted → committed to SQLite with FULL sync, over the last minute of the runs): p50 {ms('0.5')} ms, "
      f"p99 **{ms('0.99')} ms**, max {ms('1')} ms; {metrics.get('ttt_store_moves_saved_total', '?')} moves saved, "
      f"{metrics.get('ttt_store_moves_dropped_total', '?')} lost on a full queue.")
print(f"Store: {metrics.get('ttt_store_games_written_total', '?')} games written, writer queue at most "
      f"{metrics.get('ttt_store_queue_depth_max', '?')} deep (bound 65536), "
      f"{metrics.get('ttt_store_games_dropped_total', '?')} dropped, {metrics.get('ttt_store_write_failures_total', '?')} failed writes.")
idle_f = last_summary(f"{work}/idle.out")
print(f"Paced p99 per run: {', '.join(str(f['p99_us']) for f in runs['paced'])} µs.")
print(f"Idle: {idle_f['idle']} connections cost {idle_f['rss_per_conn_bytes']} bytes of server RSS each.")
print("Restore: " + open(f"{work}/restore.out").read().strip().removeprefix("restore: ") + ".")
PY
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
