#!/usr/bin/env bash
# Installs what is missing, builds weft and its tests, and runs every test through ctest.
#   tools/test.sh             Release build in build/
#   tools/test.sh --sanitize  AddressSanitizer + UndefinedBehaviorSanitizer build (clang) in build-sanitize/,
#                             with the fuzz harnesses, without the tests that take minutes under
#                             the sanitizers (tests/CMakeLists.txt says which)
# With CI=true, warnings are errors and targets compile in unity batches (faster clean builds).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/setup.sh"

mode="${1:-}"
case "$mode" in
  "") build_dir="$WEFT_ROOT/build"; args=(-DCMAKE_BUILD_TYPE=Release) ;;
  --sanitize)
    # The CUDA backend is compiled and linked by the plain pass; sanitizers do not apply to it.
    # -O1 with line tables compiles in half the time of -O2 -g, and the sanitizers' reports keep
    # their file and line. Clang, so that the same build links the fuzz harnesses (tests/fuzz/),
    # each of which runs a few seconds as a test.
    build_dir="$WEFT_ROOT/build-sanitize"
    args=(-DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG" -DWEFT_SANITIZE=ON
          -DWEFT_CUDA=OFF -DWEFT_FUZZ=ON -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14)
    export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1"
    export LSAN_OPTIONS="suppressions=$WEFT_ROOT/tools/lib/lsan-suppressions.txt:print_suppressions=0"
    export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
    ;;
  -h|--help) sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) echo "tools/test.sh: unknown option '$mode' (expected --sanitize)" >&2; exit 2 ;;
esac

weft_install_packages
weft_build "$build_dir" "${args[@]}"
ctest --test-dir "$build_dir" --output-on-failure -j "$(nproc)"
