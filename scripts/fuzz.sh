#!/usr/bin/env bash
# Runs every fuzz target for FUZZ_SECS seconds (default 30) from its committed
# seeds, and prints each run's executions and coverage. Fails on any crash.
# The stable toolchain accepts cargo-fuzz's sanitizer flags with RUSTC_BOOTSTRAP=1.
set -euo pipefail
cd "$(dirname "$0")/../fuzz"
FUZZ_SECS=${FUZZ_SECS:-30}
export RUSTC_BOOTSTRAP=1
command -v cargo-fuzz >/dev/null 2>&1 || cargo install cargo-fuzz --locked
cargo fuzz build -O
for target in $(cargo fuzz list); do
  mkdir -p "corpus/$target"
  log=$(mktemp)
  if ! cargo fuzz run -O "$target" "corpus/$target" "seeds/$target" -- \
      -max_total_time="$FUZZ_SECS" -print_final_stats=1 >"$log" 2>&1; then
    tail -40 "$log"
    echo "fuzz target $target failed; the input is in fuzz/artifacts/$target/" >&2
    exit 1
  fi
  done_line=$(grep -E '^#[0-9]+[[:space:]]+DONE' "$log" | tail -1 || true)
  echo "$target: ${done_line}"
  rm -f "$log"
done
