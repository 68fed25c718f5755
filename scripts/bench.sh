#!/usr/bin/env bash
# Measures ttt-server in the regime a busy server lives in, against a bare
# tokio-tungstenite relay that sends the same frames, in one run:
#
# - one target at a time, pinned to core 0, its load generator on core 1;
# - many short games: PAIRS (1600) pairs of 3×3 players, rematching after
#   every game;
# - closed loop (each pair moves as soon as it saw the last move) and paced
#   (RATE moves/s across all pairs: the mover's round-trip p99);
# - relay runs interleaved with the targets' (relay, targets…, relay, …), so
#   that the machine's drift hits both; ratios are of the means over ROUNDS;
# - each server's idle cost: IDLE connections that only answer pings, RSS
#   per connection; and a live game's: LIVE games, each seated and waiting
#   for its second move, RSS per connection in them.
#
# TARGETS names what is measured besides the relay, space-separated:
#   default       ttt-server as it ships (SQLite in a fresh temp dir)
#   none          ttt-server --database none
#   timer         ttt-server as it ships with today's per-move timer on
#                 (--turn-timeout-ms 30000: every other target runs without)
#   fischer       ttt-server as it ships, every game on a Fischer clock (3+2):
#                 against `timer`, what the clock costs the move path
#   tasks         not ttt-server: the relay with the server's data flow (a task
#                 per connection and per pair, bounded queues between them), to
#                 tell the cost of that flow from the server's own work
#   postgres      ttt-server --database URL: the URL given as `--database URL`,
#                 else a Postgres this script starts (scripts/postgres.sh, Debian's
#                 `postgresql`) pinned to the server's core, emptied before the
#                 idle measure
#   LABEL=PATH    another ttt-server binary with its defaults (an A/B of builds)
#   failover      not a load: a cluster of two on a throwaway Postgres and Redis,
#                 one instance SIGKILLed KILLS (10) times with GAMES (20) games in
#                 progress; the time from each kill to the other's adopting them
#                 (p50, max)
#   cluster       two instances of a cluster on a Postgres and a Redis this script
#                 starts (scripts/cluster.sh), all on core 0: PAIRS games whose
#                 players are both on one instance ("same") against games whose
#                 second player is on the other ("cross", relayed over Redis),
#                 interleaved, closed loop and paced
# Closed-loop runs also count the lone ACKs the target's sockets send (an ACK
# not carried by a reply: the kernel sends one when a reply takes longer than
# its 40 ms delayed-ACK timer), per frame received, halfway through the run.
# Each prints one figure line, and each target one summary line (its CPU per move
# against the relay's and, when `none` ran too, against `none`'s); with --update-readme the table goes into
# README.md. Environment: SECS (10), PAIRS (1600), RATE (10000), IDLE (10000), LIVE (1000),
# ROUNDS (3), TARGETS ("default none"), SERVER_FLAGS (extra flags for every server).
set -euo pipefail
cd "$(dirname "$0")/.."
SECS=${SECS:-10}
PAIRS=${PAIRS:-1600}
RATE=${RATE:-10000}
IDLE=${IDLE:-10000}
LIVE=${LIVE:-1000}
ROUNDS=${ROUNDS:-3}
TARGETS=${TARGETS:-default none}
SERVER_FLAGS=${SERVER_FLAGS:-}
UPDATE_README=0
PG_URL=""
while [ $# -gt 0 ]; do
  case "$1" in
    --update-readme) UPDATE_README=1 ;;
    --database) PG_URL=$2; shift ;;
    *) echo "usage: $0 [--update-readme] [--database postgres://…]" >&2; exit 2 ;;
  esac
  shift
done
if [ -n "$PG_URL" ] && ! grep -qw postgres <<<"$TARGETS"; then TARGETS="$TARGETS postgres"; fi
FAILOVER=0
CLUSTER=0
grep -qw failover <<<"$TARGETS" && FAILOVER=1
grep -qw cluster <<<"$TARGETS" && CLUSTER=1
kept=""
for t in $TARGETS; do [ "$t" = failover ] || [ "$t" = cluster ] || kept="$kept $t"; done
TARGETS=${kept# }

cargo build --release -q -p tictactoe-server -p tictactoe-tests --bin ttt-server --bin loadgen --bin failover
BIN=target/release
failover() {
  local line
  line=$(TTT_SERVER_BIN=$BIN/ttt-server $BIN/failover --kills "${KILLS:-10}" --games "${GAMES:-20}" | tail -1)
  echo "$line (\`KILLS=${KILLS:-10} GAMES=${GAMES:-20} TARGETS=failover scripts/bench.sh\`)"
}
if [ "$FAILOVER" = 1 ] && [ -z "$TARGETS" ] && [ "$CLUSTER" = 0 ]; then
  failover
  exit 0
fi
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
if [ "$(nproc)" -ge 2 ] && command -v taskset >/dev/null; then
  ON_SERVER="taskset -c 0"; ON_LOAD="taskset -c 1"
else
  ON_SERVER=""; ON_LOAD=""
fi
work=$(mktemp -d)
own_pg=""
cleanup() {
  for p in $(cat "$work"/*.pid 2>/dev/null); do kill "$p" 2>/dev/null || true; done
  [ -n "${cluster_pid:-}" ] && kill -TERM "$cluster_pid" 2>/dev/null && wait "$cluster_pid" 2>/dev/null
  [ -n "$own_pg" ] && scripts/postgres.sh stop "$own_pg" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT INT TERM
if grep -qw postgres <<<"$TARGETS" && [ -z "$PG_URL" ]; then
  # Postgres runs as its own user when this runs as root: it must reach the directory.
  chmod 755 "$work"
  own_pg="$work/pg"
  # shellcheck disable=SC2086
  PG_URL=$($ON_SERVER scripts/postgres.sh start "$own_pg")
fi

# The flags of the default target that binary $1 knows (older builds lack some).
flags_of() {
  local help
  help=$("$1" --help 2>/dev/null || true)
  grep -q -- --spill-dir <<<"$help" && printf -- '--spill-dir %s ' "$work"
  grep -q -- --max-connections-per-ip <<<"$help" && printf -- '--max-connections-per-ip 100000 '
  true
}

# The command line of target $1 (the relay is "relay").
command_of() {
  local common="--bind 127.0.0.1:0 --max-messages-per-second 0 --turn-timeout-ms 0 --max-connections 20000"
  case "$1" in
    relay) echo "$BIN/loadgen --serve-baseline 127.0.0.1:0" ;;
    tasks) echo "$BIN/loadgen --serve-baseline 127.0.0.1:0 --tasks" ;;
    # The load comes from one address: lift the per-address cap (older builds have none).
    default) echo "$BIN/ttt-server $common --spill-dir $work --max-connections-per-ip 100000 --database sqlite:$work/default.db $SERVER_FLAGS" ;;
    none) echo "$BIN/ttt-server $common --spill-dir $work --max-connections-per-ip 100000 --database none $SERVER_FLAGS" ;;
    timer) echo "$BIN/ttt-server ${common/--turn-timeout-ms 0/--turn-timeout-ms 30000} --spill-dir $work --max-connections-per-ip 100000 --database sqlite:$work/timer.db $SERVER_FLAGS" ;;
    # The clock comes with the load's requests (see run).
    fischer) echo "$BIN/ttt-server $common --spill-dir $work --max-connections-per-ip 100000 --database sqlite:$work/fischer.db $SERVER_FLAGS" ;;
    postgres) echo "$BIN/ttt-server $common --spill-dir $work --max-connections-per-ip 100000 --database $PG_URL $SERVER_FLAGS" ;;
    # Another build: the same spill dir and per-address cap, if it has them.
    *=*) echo "${1#*=} $common $(flags_of "${1#*=}") --database sqlite:$work/${1%%=*}.db $SERVER_FLAGS" ;;
    *) echo "unknown target $1" >&2; exit 2 ;;
  esac
}
label_of() { case "$1" in *=*) echo "${1%%=*}" ;; *) echo "$1" ;; esac; }

# Starts target $1 alone on core 0; sets $addr and $pid.
start() {
  local log="$work/$(label_of "$1").log" cmd
  cmd=$(command_of "$1")
  # A log left by this target's last run must not be read for this one's address.
  rm -f "$log"
  # shellcheck disable=SC2086
  $ON_SERVER $cmd >"$log" 2>&1 &
  pid=$!
  echo "$pid" >"$log.pid"
  for _ in $(seq 200); do
    addr=$(grep -oE '(addr=|listening on )[0-9.]+:[0-9]+' "$log" 2>/dev/null | grep -oE '[0-9.]+:[0-9]+' | head -1 || true)
    [ -n "$addr" ] && return
    sleep 0.05
  done
  echo "target $1 did not start: $(cat "$log")" >&2; exit 1
}
stop() { kill -TERM "$pid" 2>/dev/null || true; while kill -0 "$pid" 2>/dev/null; do sleep 0.05; done; rm -f "$work"/*.pid; }

# Lone ACKs per data segment received, over the established sockets on
# local port $1 so far (each socket's handshake ACK left out); "–" without `ss`.
lone_acks() {
  command -v ss >/dev/null || { echo "lone_acks=–"; return; }
  ss -tinH state established "( sport = :$1 )" | awk '
    { for (i = 1; i <= NF; i++) { split($i, kv, ":");
        if (kv[1] == "segs_out") { so += kv[2]; n++ } else if (kv[1] == "data_segs_out") dso += kv[2];
        else if (kv[1] == "data_segs_in") dsi += kv[2] } }
    END { if (dsi > 0) printf "lone_acks=%.2f\n", (so - dso - n) / dsi; else print "lone_acks=–" }'
}

# User and system CPU ticks process $1 has used so far (0 when it is gone).
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null || echo 0; }

# One run against target $1: closed loop or paced ($2), output to $3.
run() {
  local target=$1 mode=$2 out=$3 extra=() load
  case "$target" in
    relay | tasks) extra+=(--baseline) ;;
    fischer) extra+=(--clock 3+2) ;;
  esac
  [ "$mode" = paced ] && extra+=(--rate "$RATE")
  start "$target"
  local cpu_before
  cpu_before=$(cpu_ticks "$pid")
  $ON_LOAD $BIN/loadgen --url "ws://$addr/" --pairs "$PAIRS" --secs "$SECS" "${extra[@]}" >"$out" &
  load=$!
  if [ "$mode" = closed ]; then
    sleep $((SECS / 2 + 1))
    lone_acks "${addr##*:}" >"$out.acks"
  fi
  wait "$load"
  # The target's CPU (all its threads, user and system) per move made: at a
  # paced rate, the figure that holds across runs on a noisy machine.
  awk -v t=$(($(cpu_ticks "$pid") - cpu_before)) -v hz="$(getconf CLK_TCK)" -v secs="$SECS" '
    /summary/ { for (i = 1; i <= NF; i++) if ($i ~ /^moves_per_sec=/) { split($i, kv, "="); m = kv[2] * secs } }
    END { if (m > 0) printf "cpu_us_per_move=%.2f\n", t * 1e6 / hz / m }' "$out" >"$out.cpu"
  if [ "$target" != relay ] && [ "$target" != tasks ]; then
    curl -s "http://$addr/metrics" >"$out.metrics" 2>/dev/null || true
  fi
  stop
  echo "$(label_of "$target") $mode: $(grep -h summary "$out") $(cat "$out.cpu")"
}

# The cluster rows: same-instance and cross-instance games on one cluster.
cluster_rows() {
  local dir="$work/cluster" port=${CLUSTER_PORT:-18480} kind mode r extra join
  mkdir -p "$dir"
  chmod 755 "$work" "$dir"
  # The load generator is one address: its cross-instance joins would
  # spend that address's budget of lookups (older builds have none).
  local lookups=""
  "$BIN/ttt-server" --help 2>/dev/null | grep -q -- --lookups-per-second-per-ip && lookups="--lookups-per-second-per-ip 0"
  # shellcheck disable=SC2086 # $lookups is zero or two words
  TTT_SERVER=$BIN/ttt-server PORT=$port $ON_SERVER scripts/cluster.sh 2 "$dir" -- \
    --max-messages-per-second 0 --turn-timeout-ms 0 --max-connections 20000 --max-connections-per-ip 100000 $lookups \
    >"$dir/cluster.out" 2>&1 &
  cluster_pid=$!
  for p in $port $((port + 1)); do
    for _ in $(seq 400); do
      curl -s "http://127.0.0.1:$p/healthz" 2>/dev/null | grep -q '"bus":"ok"' && break
      sleep 0.05
    done
  done
  # Each instance hears of the other within a second of its bus coming up.
  sleep 2
  for r in $(seq "$ROUNDS"); do
    for mode in closed paced; do
      for kind in same cross; do
        extra=()
        [ "$mode" = paced ] && extra+=(--rate "$RATE")
        join=$port
        [ "$kind" = cross ] && join=$((port + 1))
        $ON_LOAD $BIN/loadgen --url "ws://127.0.0.1:$port/" --join-url "ws://127.0.0.1:$join/" \
          --pairs "$PAIRS" --secs "$SECS" "${extra[@]}" >"$dir/$kind.$mode.$r"
        echo "cluster $kind $mode: $(grep -h summary "$dir/$kind.$mode.$r")" >&2
      done
    done
  done
  kill -TERM "$cluster_pid" 2>/dev/null || true
  wait "$cluster_pid" 2>/dev/null || true
  cluster_pid=""
  python3 - "$dir" "$SECS" "$PAIRS" "$RATE" "$ROUNDS" <<'PY'
import glob, re, statistics, sys
d, secs, pairs, rate, rounds = sys.argv[1:]
def summary(path):
    lines = [l for l in open(path) if l.startswith("summary:")]
    return {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", lines[-1])}
def runs(kind, mode):
    return [summary(p) for p in sorted(glob.glob(f"{d}/{kind}.{mode}.*"))]
mean = lambda xs: statistics.fmean(xs) if xs else float("nan")
same = (mean([s["moves_per_sec"] for s in runs("same", "closed")]), mean([s["p99_us"] for s in runs("same", "paced")]))
print()
print(f"Cluster: `SECS={secs} PAIRS={pairs} RATE={rate} ROUNDS={rounds} TARGETS=cluster scripts/bench.sh`; two instances, "
      "Postgres and Redis on core 0, load on core 1, same and cross runs interleaved.")
print()
print(f"| games | closed loop moves/s | ÷ same | paced {rate}/s p99 µs | ÷ same's | errors |")
print("|---|---:|---:|---:|---:|---:|")
for kind, label in (("same", "both players on one instance"), ("cross", "players on different instances")):
    closed, paced = runs(kind, "closed"), runs(kind, "paced")
    moves, p99 = mean([s["moves_per_sec"] for s in closed]), mean([s["p99_us"] for s in paced])
    errors = sum(s["errors"] + s["judged_bad"] for s in closed + paced)
    print(f"| {label} | {moves:,.0f} | **{moves / same[0]:.2f}** | {p99:,.0f} | **{p99 / same[1]:.2f}** | {errors} |")
print()
print("bench: cluster: cross-instance games " + f"{mean([s['moves_per_sec'] for s in runs('cross', 'closed')]) / same[0]:.2f}x the same-instance moves/s, "
      f"paced p99 {mean([s['p99_us'] for s in runs('cross', 'paced')]) / same[1]:.2f}x")
PY
}

if [ -z "$TARGETS" ]; then
  table=""
  [ "$CLUSTER" = 1 ] && table=$(cluster_rows)
  [ "$FAILOVER" = 1 ] && table="$table
$(failover)"
  echo "$table"
  exit 0
fi

for r in $(seq "$ROUNDS"); do
  for mode in closed paced; do
    run relay "$mode" "$work/relay.$mode.$r.a"
    for t in $TARGETS; do run "$t" "$mode" "$work/$(label_of "$t").$mode.$r"; done
    run relay "$mode" "$work/relay.$mode.$r.b"
  done
done
# Idle cost on fresh databases: a file the load runs filled makes the
# server start with a warm page cache that connections then reuse, which
# hides their cost.
rm -f "$work"/*.db "$work"/*.db-wal "$work"/*.db-shm
if [ -n "$own_pg" ]; then
  bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
  PGOPTIONS="-c client_min_messages=warning" "$bin/psql" -q -h "$own_pg" -U ttt -d ttt \
    -c "DROP SCHEMA public CASCADE; CREATE SCHEMA public" >/dev/null
fi
for t in $TARGETS; do
  case "$t" in tasks) continue ;; esac
  if [ "$t" != none ]; then
    start "$t"
    $ON_LOAD $BIN/loadgen --url "ws://$addr/" --idle "$IDLE" --server-pid "$pid" --secs 1 >"$work/$(label_of "$t").idle"
    stop
  fi
  # A connection in a live game, seated and waiting for a move.
  start "$t"
  if ! $ON_LOAD $BIN/loadgen --url "ws://$addr/" --live "$LIVE" --server-pid "$pid" --secs 1 >"$work/$(label_of "$t").live"; then
    echo "$t: the live-game measure failed; its server's log ends:" >&2
    grep -iE "error|warn" "$work/$(label_of "$t").log" | tail -5 >&2 || true
  fi
  stop
done

table=$(python3 - "$work" "$ROUNDS" "$SECS" "$PAIRS" "$RATE" "$IDLE" "$TARGETS" <<'PY'
import glob, os, re, statistics, sys
work, rounds, secs, pairs, rate, idle, targets = sys.argv[1], int(sys.argv[2]), *sys.argv[3:]
labels = [t.split("=")[0] for t in targets.split()]
def summary(path):
    lines = [l for l in open(path) if l.startswith("summary:")]
    return {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", lines[-1])}
def runs(label, mode):
    return [summary(p) for p in sorted(glob.glob(f"{work}/{label}.{mode}.*")) if not p.endswith((".metrics", ".acks", ".cpu"))]
mean = lambda xs: statistics.fmean(xs) if xs else float("nan")
def figures(pattern, key):
    """Each `key=number` the runs' files matching `pattern` hold."""
    xs = []
    for p in glob.glob(f"{work}/{pattern}"):
        m = re.search(rf"{key}=([0-9.]+)", open(p).read())
        if m:
            xs.append(float(m.group(1)))
    return xs
def lone_acks(label):
    xs = figures(f"{label}.closed.*.acks", "lone_acks")
    return f"{mean(xs):.2f}" if xs else "–"
relay_closed = mean([s["moves_per_sec"] for s in runs("relay", "closed")])
relay_p99 = mean([s["p99_us"] for s in runs("relay", "paced")])
def durable_p99(label):
    qs = []
    for p in glob.glob(f"{work}/{label}.*.metrics"):
        m = re.search(r'^ttt_move_durable_seconds\{quantile="0.99"\} (\S+)$', open(p).read(), re.M)
        if m and m.group(1) != "NaN":
            qs.append(1000 * float(m.group(1)))
    return f"{max(qs):.0f} ms" if qs else "–"
def cpu_per_move(label):
    return mean(figures(f"{label}.paced.*.cpu", "cpu_us_per_move"))
def rss(label, kind="idle"):
    p = f"{work}/{label}.{kind}"
    try:
        return f"{summary(p)['rss_per_conn_bytes']:,} B"
    except (OSError, IndexError):
        return "–"
print(f"Command: `SECS={secs} PAIRS={pairs} RATE={rate} IDLE={idle} ROUNDS={rounds} TARGETS=\"{targets}\" scripts/bench.sh`; "
      f"{os.cpu_count()} cores, target on core 0, load on core 1, one target at a time, relay runs interleaved.")
print()
print(f"| target | closed loop moves/s | ÷ relay | lone ACKs per frame, closed loop | paced {rate}/s p99 µs | ÷ relay's | CPU µs per move paced | ÷ relay's | game end p99 ms paced (closed), last move → game_over | move durable p99 | RSS per idle connection | RSS per connection in a live game | errors |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
relay_cpu = cpu_per_move("relay")
# Durability's price: each target's CPU per move against `--database none`'s, when both ran.
none_cpu = cpu_per_move("none") if "none" in labels else float("nan")
def against_none(label):
    return "" if label == "none" or none_cpu != none_cpu else f", {cpu_per_move(label) / none_cpu:.2f}x none's"
print(f"| bare relay | {relay_closed:,.0f} | 1 | {lone_acks('relay')} | {relay_p99:,.0f} | 1 | {relay_cpu:.2f} | 1 | – | – | – | – | {sum(s['errors'] for m in ('closed','paced') for s in runs('relay', m))} |")
lines = []
for label in labels:
    closed, paced = runs(label, "closed"), runs(label, "paced")
    moves = mean([s["moves_per_sec"] for s in closed])
    p99 = mean([s["p99_us"] for s in paced])
    end = max(s["end_p99_us"] for s in paced) / 1000
    end_closed = max(s["end_p99_us"] for s in closed) / 1000
    errors = sum(s["errors"] + s["judged_bad"] for s in closed + paced)
    print(f"| {label} | {moves:,.0f} | **{moves / relay_closed:.2f}** | {lone_acks(label)} | {p99:,.0f} | **{p99 / relay_p99:.2f}** | {cpu_per_move(label):.2f} | **{cpu_per_move(label) / relay_cpu:.2f}** | {end:.1f} ({end_closed:.1f}) | {durable_p99(label)} | {rss(label)} | {rss(label, 'live')} | {errors} |")
    lines.append(f"bench: {label}: closed loop {moves / relay_closed:.2f}x the relay's moves/s (lone ACKs per frame {lone_acks(label)}, relay {lone_acks('relay')}), paced p99 {p99 / relay_p99:.2f}x the relay's, CPU per move paced {cpu_per_move(label):.2f} us ({cpu_per_move(label) / relay_cpu:.2f}x the relay's{against_none(label)}), "
                 f"game end p99 {end:.1f} ms paced ({end_closed:.1f} closed loop), move durable p99 {durable_p99(label)}, idle RSS {rss(label)}/connection, live-game RSS {rss(label, 'live')}/connection, errors {errors}")
print()
print("Closed-loop runs (moves/s): " + "; ".join(
    f"{l} " + ", ".join(str(s["moves_per_sec"]) for s in runs(l, "closed")) for l in ["relay"] + labels) + ".")
print("Paced p99 (µs): " + "; ".join(
    f"{l} " + ", ".join(str(s["p99_us"]) for s in runs(l, "paced")) for l in ["relay"] + labels) + ".")
print()
print("\n".join(lines))
PY
)
if [ "$CLUSTER" = 1 ]; then
  table="$table
$(cluster_rows)"
fi
if [ "$FAILOVER" = 1 ]; then
  table="$table
$(failover)"
fi
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
