#!/usr/bin/env bash
# Takes the README's screenshots of the web page (docs/*.png): starts a
# server on a fresh database, plays through the page in Debian's chromium
# (playwright-core from web/node_modules), and saves each screen.
# Usage: scripts/screenshots.sh [OUT_DIR, default docs]
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-docs}
mkdir -p "$out"
cargo build -q -p tictactoe-server -p tictactoe-client
[ -d web/node_modules/playwright-core ] || (cd web && npm ci --silent)
work=$(mktemp -d)
target/debug/ttt-server --bind 127.0.0.1:0 --database "sqlite:$work/shots.db" --house-think-ms 50 \
  --max-messages-per-second 0 >"$work/server.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null || true; rm -rf "$work"' EXIT
addr=
for _ in $(seq 100); do
  addr=$(grep -oE 'addr=[0-9.]+:[0-9]+' "$work/server.log" | head -1 | cut -d= -f2 || true)
  [ -n "$addr" ] && break
  sleep 0.1
done
[ -n "$addr" ] || { echo "server did not start: $(cat "$work/server.log")" >&2; exit 1; }
node web/e2e/screenshots.mjs "http://$addr/" "$out" target/debug/ttt
