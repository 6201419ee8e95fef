#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz/) with clang, ASan and UBSan, and runs each one:
# first the committed regression inputs (tests/fuzz/regressions/<target>/, each once), then
# fuzzing from the seed corpus (tests/fuzz/corpus/<target>/) for SECONDS with a fixed seed.
#   bash scripts/fuzz.sh [SECONDS] [TARGET...]     npm run fuzz -- 600;  npm test runs 20 s each
# New coverage is kept in build/fuzz/corpus/<target>/ (not committed). A failing input is saved
# in build/fuzz/crashes/<target>/ and fails the run; once fixed, copy it into
# tests/fuzz/regressions/<target>/ so that every later run replays it.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/common.sh

seconds=${1:-300}
shift || true
[[ $seconds =~ ^[0-9]+$ ]] || { echo "fuzz: SECONDS must be a whole number, got '$seconds'" >&2; exit 2; }
jobs=$(nproc 2>/dev/null || echo 2)
build=build/fuzz

cmake -S . -B "$build" -DCMAKE_CXX_COMPILER=clang++-14 -DCMAKE_BUILD_TYPE=RelWithDebInfo -DATTNLENS_FUZZ=ON \
  -DATTNLENS_BUILD_TESTS=OFF -DATTNLENS_BUILD_EXAMPLES=OFF >/dev/null
cmake --build "$build" -j"$jobs"

mapfile -t targets <"$build/tests/fuzz/targets.txt"
if (($#)); then
  for wanted in "$@"; do
    [[ " ${targets[*]} " == *" $wanted "* ]] || { echo "fuzz: no target '$wanted' (have: ${targets[*]})" >&2; exit 2; }
  done
  targets=("$@")
fi

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# One target per core at a time: each is a single process, so two cores fuzz two targets in the
# time of one. Each writes its own log and, on failure, a file in $build/failed/.
rm -rf "$build/failed"
mkdir -p "$build/failed"
fuzz_one() {
  local t=$1 exe=$build/tests/fuzz/fuzz_$1 log=$build/logs/$1.log
  mkdir -p "$build/corpus/$t" "$build/crashes/$t" "$build/logs"
  local regressions=(tests/fuzz/regressions/"$t"/*)
  if [[ -e ${regressions[0]} ]]; then
    if ! "$exe" "${regressions[@]}" >"$log" 2>&1; then
      { echo "fuzz $t: a regression input fails again; the end of $log:"; tail -n 30 "$log"; } >&2
      touch "$build/failed/$t"
      return
    fi
    echo "fuzz $t: ${#regressions[@]} regression inputs pass"
  fi
  # -max_len: inputs up to 4 KiB cover every decoder; -timeout: a single input over 10 s fails.
  if "$exe" -seed=1 -max_total_time="$seconds" -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$build/crashes/$t/" "$build/corpus/$t" "tests/fuzz/corpus/$t" >"$log" 2>&1; then
    local runs corpus
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    corpus=$(ls "$build/corpus/$t" | wc -l)
    echo "fuzz $t: ${runs:-?} executions in ${seconds} s, no failure (seed 1; corpus now $corpus inputs)"
  else
    {
      echo "fuzz $t: FAILED; the end of $log:"
      tail -n 40 "$log"
      echo "fuzz $t: the input is in $build/crashes/$t/; reproduce with: $exe <file>"
    } >&2
    touch "$build/failed/$t"
  fi
}
running=0
for t in "${targets[@]}"; do
  fuzz_one "$t" &
  if ((++running >= jobs)); then
    wait -n || true
    running=$((running - 1))
  fi
done
wait
mapfile -t failed < <(ls "$build/failed")
if ((${#failed[@]})); then
  echo "fuzz: failures in: ${failed[*]}" >&2
  exit 1
fi
