#!/usr/bin/env bash
# The public validation suite (docs/VALIDATION.md): builds weft if needed, then simulates every
# published training run in scenarios/validation/ with the shipped defaults and prints, per run, the
# published value, weft's prediction and the error with its sign, then the mean absolute error,
# the worst case and the mean signed error (and peak memory where a source gives it).
#   tools/validate.sh [CASES...] [--json FILE]    arguments go to `weft suite` (default: the whole suite)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/setup.sh"

weft_help_if_asked "$@"
weft_install_packages
weft_build "$WEFT_ROOT/build" -DCMAKE_BUILD_TYPE=Release
exec "$WEFT_ROOT/build/tools/weft" suite "$@"
