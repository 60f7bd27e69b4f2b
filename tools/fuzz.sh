#!/usr/bin/env bash
# Fuzzes the files weft reads with libFuzzer under AddressSanitizer and
# UndefinedBehaviorSanitizer (harnesses in tests/fuzz/, docs/RELIABILITY.md).
#   tools/fuzz.sh [SECONDS]              build build-fuzz/ (clang) and run each harness SECONDS (default 60)
#   tools/fuzz.sh --runs N               run each harness for N executions instead
#   tools/fuzz.sh --harness NAME ...     run one harness (training_scenario, graph_scenario, spec, data,
#                                        measurements, profile, execution_plan, trace, resilience,
#                                        sweep_journal)
#   tools/fuzz.sh --build DIR ...        use the harnesses already built in DIR (as ctest does)
# Corpora grow in DIR/tests/fuzz/corpus/; an input that crashes, leaks or hangs is written to
# DIR/tests/fuzz/findings/ and the script exits 1.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/setup.sh"

harnesses=(training_scenario graph_scenario spec data measurements profile execution_plan trace resilience
  sweep_journal)
build_dir=""
seconds=60
runs=""
selected=()
while [ $# -gt 0 ]; do
  case "$1" in
    -h | --help) weft_usage 0 ;;
    --harness) [ $# -ge 2 ] || weft_usage; selected+=("$2"); shift 2 ;;
    --build) [ $# -ge 2 ] || weft_usage; build_dir="$2"; shift 2 ;;
    --runs) [ $# -ge 2 ] || weft_usage; weft_require_positive_integer "--runs" "$2"; runs="$2"; shift 2 ;;
    -*) echo "tools/fuzz.sh: unknown option '$1'" >&2; weft_usage ;;
    *) weft_require_positive_integer "SECONDS" "$1"; seconds="$1"; shift ;;
  esac
done
[ ${#selected[@]} -gt 0 ] || selected=("${harnesses[@]}")
for harness in "${selected[@]}"; do
  case " ${harnesses[*]} " in *" $harness "*) ;; *) echo "tools/fuzz.sh: no harness '$harness' (expected one of: ${harnesses[*]})" >&2; exit 2 ;; esac
done

if [ -z "$build_dir" ]; then
  build_dir="$WEFT_ROOT/build-fuzz"
  weft_install_packages
  CC=clang-14 CXX=clang++-14 weft_build "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG" -DWEFT_FUZZ=ON -DWEFT_SANITIZE=ON -DWEFT_CUDA=OFF \
    -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14
fi

fuzz_dir="$build_dir/tests/fuzz"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
status=0
for harness in "${selected[@]}"; do
  corpus="$fuzz_dir/corpus/$harness"
  findings="$fuzz_dir/findings/$harness"
  mkdir -p "$corpus" "$findings"
  limit=(-max_total_time="$seconds")
  [ -n "$runs" ] && limit=(-runs="$runs")
  log="$fuzz_dir/$harness.log"
  # -timeout: an input running 10 s is a hang; -rss_limit_mb: one that takes 2 GB is unbounded.
  if "$fuzz_dir/fuzz_$harness" "${limit[@]}" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
      -artifact_prefix="$findings/" "$corpus" "$fuzz_dir/seeds/$harness" >"$log" 2>&1; then
    verdict="no finding"
  else
    verdict="FINDING (log: $log, input in $findings/)"
    status=1
  fi
  executions=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  per_second=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  echo "fuzz $harness: ${executions:-?} executions (${per_second:-?}/s), corpus $(ls "$corpus" | wc -l) inputs: $verdict"
done
exit "$status"
