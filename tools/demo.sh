#!/usr/bin/env bash
# Installs what is missing, builds weft, and sweeps the parallel layouts of Llama 3 70B on 1,024
# H100s: prints the top 10 plans and writes the HTML report and the best plan's Chrome trace.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/setup.sh"

weft_install_packages
weft_build "$WEFT_ROOT/build" -DCMAKE_BUILD_TYPE=Release

out="$WEFT_ROOT/build/demo"
mkdir -p "$out"
"$WEFT_ROOT/build/tools/weft" sweep "$WEFT_ROOT/scenarios/experiments/llama3-70b-1024xh100.json" --top 10 \
  --html "$out/sweep.html" --trace-best "$out/best-trace.json" --csv "$out/plans.csv"
