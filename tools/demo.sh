#!/usr/bin/env bash
# Installs what is missing, builds weft, and simulates the bundled default scenario: a pipeline of
# two stages by two data-parallel replicas, writing a Chrome trace and a JSON result.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/setup.sh"

weft_install_packages
weft_build "$WEFT_ROOT/build" -DCMAKE_BUILD_TYPE=Release

out="$WEFT_ROOT/build/demo"
mkdir -p "$out"
"$WEFT_ROOT/build/tools/weft" simulate "$WEFT_ROOT/scenarios/experiments/graph-pipeline-2x2.json" \
  --trace "$out/trace.json" --json "$out/result.json"
