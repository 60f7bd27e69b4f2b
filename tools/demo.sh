#!/usr/bin/env bash
# Installs what is missing, builds weft, and simulates the bundled default scenario: Llama 3 70B on
# 512 H100s (TP8 PP4 DP16), writing a Chrome trace and a JSON result.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/setup.sh"

weft_install_packages
weft_build "$WEFT_ROOT/build" -DCMAKE_BUILD_TYPE=Release

out="$WEFT_ROOT/build/demo"
mkdir -p "$out"
"$WEFT_ROOT/build/tools/weft" simulate "$WEFT_ROOT/scenarios/experiments/llama3-70b-512xh100.json" \
  --trace "$out/trace.json" --json "$out/result.json"
