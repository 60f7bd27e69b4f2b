#!/usr/bin/env bash
# Encoders colocated against modality parallelism on VALM-S (papers/004 §4.1, Table 2), as
# docs/experiments.md reports it:
#   tools/modality-stages.sh OUT_DIR
# simulates valm-s-16xh800 (one pipeline over the concatenated modules) and variants of it on
# 16 H800: TP4 PP4 and TP2 PP8, stages balanced by parameters or by compute time, with and
# without modality stages. OUT_DIR/plans.csv gets one row per plan.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/setup.sh"

weft_help_if_asked "$@"
if [ $# -ne 1 ]; then weft_usage; fi
out="$1"

weft_install_packages
weft_build "$WEFT_ROOT/build" -DCMAKE_BUILD_TYPE=Release
weft="$WEFT_ROOT/build/tools/weft"
base="$WEFT_ROOT/scenarios/experiments/valm-s-16xh800.json"
mkdir -p "$out"

# name | tp | pp | stage_layers rule | modality_stages (empty: colocated)
plans=(
  "colocated-tp4pp4-parameters|4|4|parameters|"
  "colocated-tp4pp4-time|4|4|time|"
  "modality-tp4pp4-v1a1l2|4|4|time|{\"vision\": 1, \"audio\": 1, \"language\": 2}"
  "colocated-tp2pp8-parameters|2|8|parameters|"
  "colocated-tp2pp8-time|2|8|time|"
  "modality-tp2pp8-v1a1l6|2|8|time|{\"vision\": 1, \"audio\": 1, \"language\": 6}"
  "modality-tp2pp8-v2a1l5|2|8|time|{\"vision\": 2, \"audio\": 1, \"language\": 5}"
)

csv="$out/plans.csv"
echo "plan,tp,pp,stage_layers,iteration_s,mfu" > "$csv.tmp"
for entry in "${plans[@]}"; do
  IFS='|' read -r name tp pp rule modality <<< "$entry"
  parallel="\"tp\": $tp, \"pp\": $pp, \"dp\": 1, \"schedule\": \"1f1b\", \"sequence_parallel\": true, \"stage_layers\": \"$rule\""
  if [ -n "$modality" ]; then parallel="$parallel, \"modality_stages\": $modality"; fi
  sed "s/\"parallel\": {[^}]*}/\"parallel\": {$parallel}/" "$base" > "$out/$name.json"
  "$weft" simulate "$out/$name.json" --json "$out/$name-result.json" > "$out/$name.txt"
  layers=$(sed -n 's/^Plan .*stage layers \([0-9/]*\).*/\1/p' "$out/$name.txt")
  time=$(sed -n 's/^  "iteration_time_s": \([0-9.e+-]*\),*$/\1/p' "$out/$name-result.json")
  mfu=$(sed -n 's/^  "mfu": \([0-9.e+-]*\),*$/\1/p' "$out/$name-result.json")
  awk -v n="$name" -v tp="$tp" -v pp="$pp" -v l="$layers" -v t="$time" -v m="$mfu" \
    'BEGIN { printf "%s,%d,%d,%s,%.3f,%.3f\n", n, tp, pp, l, t, m }' >> "$csv.tmp"
done
mv "$csv.tmp" "$csv"
cat "$csv"
