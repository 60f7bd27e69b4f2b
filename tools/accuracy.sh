#!/usr/bin/env bash
# The calibration loop on this machine's CPU, as docs/ACCURACY.md reports it:
#   tools/accuracy.sh OUT_DIR [ROUNDS]
# benches the CPU on two MPI ranks (one per core), fits a profile, simulates every cpu-gpt-*
# scenario with the default model (the derived cluster spec) and with the profile, runs every
# plan live in ROUNDS rounds (default 3) of 5 timed iterations, one plan after the other, keeps
# each plan's median round (a shared machine's speed drifts over minutes: rounds spread each plan
# over the whole run) and validates both predictions against it. About 7 minutes on 2 cores;
# run it on an otherwise idle machine.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/setup.sh"

if [ $# -lt 1 ] || [ $# -gt 2 ] || [ "$1" = "-h" ] || [ "$1" = "--help" ]; then
  sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
out="$1"
rounds="${2:-3}"
case "$rounds" in
  '' | *[!0-9]* | 0) echo "tools/accuracy.sh: ROUNDS must be a positive integer, not '$rounds'" >&2; exit 2 ;;
esac

weft_install_packages
weft_build "$WEFT_ROOT/build" -DCMAKE_BUILD_TYPE=Release
weft="$WEFT_ROOT/build/tools/weft"
root=()
if [ "$(id -u)" -eq 0 ]; then root=(--allow-run-as-root); fi
mpi=(mpirun "${root[@]}" --bind-to core -np 2)

mkdir -p "$out"
"${mpi[@]}" "$weft" bench --backend cpu -o "$out/measurements.json" --cluster-spec "$out/this-cpu.json"
"$weft" calibrate "$out/measurements.json" -o "$out/profile.json"

# Each scenario with the cluster just measured in place of the bundled "this-cpu".
cluster="$(cat "$out/this-cpu.json")"
names=()
for scenario in "$WEFT_ROOT"/scenarios/experiments/cpu-gpt-*.json; do
  name="$(basename "$scenario" .json)"
  names+=("$name")
  text="$(cat "$scenario")"
  printf '%s\n' "${text/\"cluster\": \"this-cpu\"/\"cluster\": $cluster}" >"$out/$name.json"
  "$weft" simulate "$out/$name.json" --trace "$out/$name.default.json" >/dev/null
  "$weft" simulate "$out/$name.json" --calibration "$out/profile.json" --trace "$out/$name.calibrated.json" \
    --emit-plan "$out/$name.plan.json" >/dev/null
done

for round in $(seq "$rounds"); do
  for name in "${names[@]}"; do
    "${mpi[@]}" "$weft" live "$out/$name.plan.json" --iterations 5 --trace "$out/$name.live-$round.json" |
      grep "Iteration time" | sed "s/^/$name round $round: /"
  done
done

makespan() { grep -o '"makespan_ns": *[0-9]*' "$1" | head -1 | grep -o '[0-9]*$'; }
default_pairs=()
calibrated_pairs=()
for name in "${names[@]}"; do
  median_round="$(for round in $(seq "$rounds"); do echo "$(makespan "$out/$name.live-$round.json") $round"; done |
    sort -n | sed -n "$(((rounds + 1) / 2))p" | cut -d' ' -f2)"
  cp "$out/$name.live-$median_round.json" "$out/$name.live.json"
  default_pairs+=("$out/$name.default.json" "$out/$name.live.json")
  calibrated_pairs+=("$out/$name.calibrated.json" "$out/$name.live.json")
done

echo "== default model"
"$weft" validate "${default_pairs[@]}" --json "$out/validation.default.json"
echo "== calibrated"
"$weft" validate "${calibrated_pairs[@]}" --json "$out/validation.calibrated.json"
