#!/usr/bin/env bash
# Installs what weft's build needs, builds the weft command alone (in build-demo/, without tests,
# benchmarks or the CUDA backend), and sweeps the parallel layouts of Llama 3 70B on 1,024
# H100s: prints the top 10 plans and writes the HTML report and the best plan's Chrome trace. The
# grid is narrowed to PP <= 8, CP <= 2 and VPP <= 4 (about 1,200 plans simulated, under a minute
# on 2 cores); without --grid the full default grid simulates about 6,000 plans in several minutes.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/setup.sh"

WEFT_PACKAGES=("${WEFT_BUILD_PACKAGES[@]}")
weft_install_packages
WEFT_TARGET=weft WEFT_PROGRESS=1 weft_build "$WEFT_ROOT/build-demo" -DCMAKE_BUILD_TYPE=Release -DWEFT_BUILD_TESTS=OFF \
  -DWEFT_UNITY_BUILD=ON -DWEFT_CUDA=OFF

out="$WEFT_ROOT/build-demo/demo"
mkdir -p "$out"
"$WEFT_ROOT/build-demo/tools/weft" sweep "$WEFT_ROOT/scenarios/experiments/llama3-70b-1024xh100.json" --top 10 --all \
  --grid "pp=1..8 cp=1,2 vpp=1,2,4" --html "$out/sweep.html" --trace-best "$out/best-trace.json" --csv "$out/plans.csv"
