#!/usr/bin/env bash
# Runs every libFuzzer target for a bounded time and fails on any finding (crash, uncaught
# exception, leak, sanitizer report, timeout, out-of-memory).
# Usage: fuzz/run.sh [SECONDS_PER_TARGET] [BUILD_DIR]   (defaults: 60, build-fuzz)
# Build first: cmake --preset fuzz && cmake --build --preset fuzz -j2 --target <the *_fuzz targets>
# Findings are saved as BUILD_DIR/fuzz-findings/<target>/crash-*; each one becomes a regression
# test (tests/scenarios/bad, tests/apps/crash_corpus_test.cpp) once fixed. New inputs the fuzzers
# find go to BUILD_DIR/fuzz-corpus/<target>, so a later run continues from them.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
build=${2:-build-fuzz}
# target -> seed directories (read-only; the first corpus directory is the writable one)
declare -A seeds=(
  [scenario_loader]="scenarios/library tests/scenarios/bad tests/scenarios/data tests/workloads/data"
  [set_override]="fuzz/seeds/set"
  [size_suffix]="fuzz/seeds/size"
  [sweep_file]="scenarios/library/sweeps fuzz/seeds/sweep"
  [hf_config]="tests/workloads/data tests/scenarios/data"
)
failed=()
for target in scenario_loader set_override size_suffix sweep_file hf_config; do
  corpus="$build/fuzz-corpus/$target"
  findings="$build/fuzz-findings/$target"
  mkdir -p "$corpus" "$findings"
  echo "fuzz: $target for ${seconds} s"
  # -timeout: one input slower than 10 s is a hang; -rss_limit_mb: more than 2 GiB is a runaway.
  if ! "$build/fuzz/${target}_fuzz" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
       -max_len=65536 -print_final_stats=1 -artifact_prefix="$findings/" "$corpus" ${seeds[$target]} \
       > "$build/fuzz-$target.log" 2>&1; then
    failed+=("$target")
    tail -n 40 "$build/fuzz-$target.log"
  fi
  grep -E "^(stat::number_of_executed_units|Done)" "$build/fuzz-$target.log" || true
done
if [ "${#failed[@]}" -gt 0 ]; then
  echo "fuzz: findings in ${failed[*]} (inputs under $build/fuzz-findings/)"
  exit 1
fi
echo "fuzz: no findings"
