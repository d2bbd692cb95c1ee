#!/usr/bin/env bash
# Runs every tether-term fuzz target in turn, SECONDS (default 60) each, on
# stable Rust (RUSTC_BOOTSTRAP=1 lets cargo-fuzz pass its -Z flags). A target
# that fails does not stop the others; the script exits 1 if any failed.
# Usage: fuzz/run-all.sh [SECONDS] [TARGET...]
set -uo pipefail
cd "$(dirname "$0")"
secs="${1:-60}"
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    targets=(scanner filter tracker_restore capture escape markers projection buffers redactor utf8)
fi
export RUSTC_BOOTSTRAP=1
cargo fuzz build || exit 1
failed=()
for t in "${targets[@]}"; do
    echo "== $t (${secs}s)"
    cargo fuzz run "$t" -- -max_total_time="$secs" -dict=terminal.dict -print_final_stats=1 \
        || failed+=("$t")
done
if [ ${#failed[@]} -gt 0 ]; then
    echo "FAILED: ${failed[*]}"
    exit 1
fi
echo "all ${#targets[@]} targets ran ${secs}s without a failure"
