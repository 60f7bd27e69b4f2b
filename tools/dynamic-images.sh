#!/usr/bin/env bash
# The dynamic-workload run of papers/001 Fig. 9b on VLM-S, as docs/experiments.md reports it:
#   tools/dynamic-images.sh OUT_DIR [ITERATIONS]
# runs ITERATIONS training iterations (default 40) whose samples hold a number of images drawn
# uniformly between bounds that rise and fall: over each 20 iterations the lower bound rises from
# 0 to 16 under an upper bound of 32 (iterations 1-5), then both fall to 0 (6-20). weft plan
# times each iteration's batch under Megatron's interleaved 1F1B and plans it (a reproducible
# search of 40 expansions with --window 4), both on its stage model; OUT_DIR/iterations.csv gets
# one row per iteration, with the full simulator's time of the Megatron plan for reference, and
# the full simulator's times of two more baselines (papers/001 §8.1): nnScaler* (1F1B over one
# static partition balanced by compute time for a representative sample: 2048 text tokens and
# the pattern's mean of 13 images) and Optimus* (encoder-first: every encoder forward on the
# stages' first chunks, 1F1B over the backbone on their second, then the encoders' backward).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/setup.sh"

weft_help_if_asked "$@"
if [ $# -lt 1 ] || [ $# -gt 2 ]; then weft_usage; fi
out="$1"
iterations="${2:-40}"
weft_require_positive_integer ITERATIONS "$iterations"

weft_install_packages
weft_build "$WEFT_ROOT/build" -DCMAKE_BUILD_TYPE=Release
weft="$WEFT_ROOT/build/tools/weft"
mkdir -p "$out"

# The image bounds of iteration i (1-based) of the rise-and-fall pattern.
bounds() {
  local step=$(( ($1 - 1) % 20 + 1 ))
  if [ "$step" -le 5 ]; then
    echo "$(( (step - 1) * 4 )) 32"
  else
    # From (16, 32) at iteration 5 down to (0, 0) at iteration 20.
    echo "$(( 16 * (20 - step) / 15 )) $(( 32 * (20 - step) / 15 ))"
  fi
}

# nnScaler*'s static plan: stages balanced by compute time for the representative sample, once.
cat > "$out/representative.json" <<'EOF'
{
  "description": "VLM-S on 16 H800, 1F1B balanced by compute time for a representative sample of 2048 text tokens and 13 images (4245 tokens, padded to 4352).",
  "model": "vlm-s",
  "cluster": {"base": "h800-testbed", "gpus": 16},
  "parallel": {"tp": 4, "pp": 4, "dp": 1, "schedule": "1f1b", "stage_layers": "time"},
  "training": {"global_batch": 64, "micro_batch": 1, "seq_len": 4352, "images": 13, "dtype": "bf16"},
  "options": {"framework_overhead_GiB": 3}
}
EOF
"$weft" simulate "$out/representative.json" > "$out/representative.txt"
static_layers=$(sed -n 's/^Plan .*stage layers \([0-9/]*\).*/\1/p' "$out/representative.txt" | sed 's|/|, |g')
echo "nnScaler* stage layers: $static_layers"

# The full simulator's iteration time (s) of `scenario` with its "parallel" section replaced.
simulate_variant() {
  local scenario="$1" name="$2" parallel="$3"
  sed "s/\"parallel\": {[^}]*}/\"parallel\": {$parallel}/" "$scenario" > "$out/$name.json"
  "$weft" simulate "$out/$name.json" --json "$out/$name-result.json" > /dev/null
  sed -n 's/^  "iteration_time_s": \([0-9.e+-]*\),*$/\1/p' "$out/$name-result.json"
}

csv="$out/iterations.csv"
echo "iteration,min_images,max_images,images,megatron_s,dip_s,speedup,megatron_simulated_s,nnscaler_simulated_s,optimus_simulated_s" > "$csv.tmp"
for i in $(seq 1 "$iterations"); do
  read -r low high < <(bounds "$i")
  scenario="$out/iteration-$i.json"
  sed -e "s/\"seed\": 1,/\"seed\": $i,/" -e "s/@LOW@/$low/" -e "s/@HIGH@/$high/" > "$scenario" <<'EOF'
{
  "description": "VLM-S on 16 H800, Megatron's interleaved 1F1B (vpp 2, balanced by parameters); one sample of 2048 text tokens per microbatch with a bounded number of 169-token images.",
  "model": "vlm-s",
  "cluster": {"base": "h800-testbed", "gpus": 16},
  "parallel": {"tp": 4, "pp": 4, "dp": 1, "vpp": 2, "schedule": "interleaved", "stage_layers": "parameters"},
  "training": {"global_batch": 64, "micro_batch": 1, "seq_len": 8192, "dtype": "bf16"},
  "options": {"framework_overhead_GiB": 3},
  "data": {"seed": 1, "pad_to": 128, "dataset": {"name": "bounded-images", "mixture": [
    {"name": "image-text", "weight": 1, "text_tokens": {"distribution": "fixed", "value": 2048},
     "images": {"distribution": "uniform", "min": @LOW@, "max": @HIGH@}}]}}
}
EOF
  "$weft" plan "$scenario" --iterations 40 --window 4 --json "$out/plan-$i.json" > "$out/plan-$i.txt"
  images=$(sed -n 's/^Batch .* \([0-9]*\) images.*/\1/p' "$out/plan-$i.txt")
  # DIP's own schedule (the ablation's last step, even where weft plan returns a faster
  # baseline), the scenario's Megatron schedule (its first), and the latter under the full simulator.
  read -r dip megatron simulated < <(python3 -c '
import json, sys
plan = json.load(open(sys.argv[1]))
print(plan["schedules"][-1]["iteration_ms"], plan["schedules"][0]["iteration_ms"], plan["simulated_baseline_ms"])
' "$out/plan-$i.json")
  nnscaler=$(simulate_variant "$scenario" "nnscaler-$i" \
    "\"tp\": 4, \"pp\": 4, \"dp\": 1, \"schedule\": \"1f1b\", \"stage_layers\": [$static_layers]")
  optimus=$(simulate_variant "$scenario" "optimus-$i" \
    "\"tp\": 4, \"pp\": 4, \"dp\": 1, \"vpp\": 2, \"schedule\": \"encoder-first\", \"stage_layers\": \"modules\"")
  awk -v i="$i" -v lo="$low" -v hi="$high" -v n="${images:-0}" -v m="$megatron" -v d="$dip" -v s="$simulated" \
    -v ns="$nnscaler" -v op="$optimus" \
    'BEGIN { printf "%d,%d,%d,%d,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f\n", i, lo, hi, n, m / 1000, d / 1000, m / d, s / 1000,
             ns, op }' \
    >> "$csv.tmp"
  tail -1 "$csv.tmp"
done
mv "$csv.tmp" "$csv"
echo "Wrote $csv"
