#!/usr/bin/env bash
# The calibration loop on this machine's CPU, as docs/ACCURACY.md reports it:
#   tools/accuracy.sh OUT_DIR [ROUNDS]
# runs ROUNDS rounds (default 3), each a bench of the CPU on two MPI ranks (one per core)
# followed by every cpu-gpt-* plan live for 5 timed iterations, one plan after the other. The
# profile is fitted to all the rounds' benches; each plan's median round, and its median round
# among its undisturbed ones (docs/ACCURACY.md), are validated against the simulation with the
# default model (the derived cluster spec) and with the profile. A shared machine's speed drifts
# over minutes: the rounds spread the benches and every plan's runs over the same stretch of time.
# 2.5 to 4.5 minutes a round on 2 cores, depending on the host; run it on an otherwise idle machine.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/setup.sh"

weft_help_if_asked "$@"
if [ $# -lt 1 ] || [ $# -gt 2 ]; then weft_usage; fi
out="$1"
rounds="${2:-3}"
weft_require_positive_integer ROUNDS "$rounds"

weft_install_packages
weft_build "$WEFT_ROOT/build" -DCMAKE_BUILD_TYPE=Release
weft="$WEFT_ROOT/build/tools/weft"
root=()
if [ "$(id -u)" -eq 0 ]; then root=(--allow-run-as-root); fi
mpi=(mpirun "${root[@]}" --bind-to core -np 2)

mkdir -p "$out"
names=()
for scenario in "$WEFT_ROOT"/scenarios/experiments/cpu-gpt-*.json; do names+=("$(basename "$scenario" .json)"); done

# Each scenario with the cluster measured in the first round in place of the bundled "this-cpu".
write_scenarios() {
  local cluster
  cluster="$(cat "$out/this-cpu.json")"
  for name in "${names[@]}"; do
    local text
    text="$(cat "$WEFT_ROOT/scenarios/experiments/$name.json")"
    printf '%s\n' "${text/\"cluster\": \"this-cpu\"/\"cluster\": $cluster}" >"$out/$name.json"
  done
}

# Plans are simulated from the first round's profile: live runs need them before the last bench.
for round in $(seq "$rounds"); do
  spec=()
  if [ "$round" -eq 1 ]; then spec=(--cluster-spec "$out/this-cpu.json"); fi
  "${mpi[@]}" "$weft" bench --backend cpu -o "$out/measurements-$round.json" "${spec[@]}"
  if [ "$round" -eq 1 ]; then
    write_scenarios
    "$weft" calibrate "$out/measurements-1.json" -o "$out/profile-1.json" >/dev/null
    for name in "${names[@]}"; do
      "$weft" simulate "$out/$name.json" --calibration "$out/profile-1.json" --emit-plan "$out/$name.plan.json" >/dev/null
    done
  fi
  for name in "${names[@]}"; do
    "${mpi[@]}" "$weft" live "$out/$name.plan.json" --iterations 5 --trace "$out/$name.live-$round.json" |
      grep "Iteration time" | sed "s/^/$name round $round: /"
  done
done

"$weft" calibrate "$out"/measurements-*.json -o "$out/profile.json"
same_schedule() { cmp -s <(sed 's/"simulated_iteration_ns":[0-9]*//' "$1") <(sed 's/"simulated_iteration_ns":[0-9]*//' "$2"); }
for name in "${names[@]}"; do
  "$weft" simulate "$out/$name.json" --trace "$out/$name.default.json" >/dev/null
  "$weft" simulate "$out/$name.json" --calibration "$out/profile.json" --trace "$out/$name.calibrated.json" \
    --emit-plan "$out/$name.final-plan.json" >/dev/null
  if ! same_schedule "$out/$name.plan.json" "$out/$name.final-plan.json"; then
    echo "$name: the final profile orders the plan's actions differently from the plan that ran"
  fi
done

makespan() { grep -o '"makespan_ns": *[0-9]*' "$1" | head -1 | grep -o '[0-9]*$'; }
# The round of median iteration time among "MAKESPAN ROUND" lines on stdin.
median_round() { sort -n | awk '{ line[NR] = $2 } END { if (NR) print line[int((NR + 1) / 2)] }'; }

# Each plan is validated twice: on its median round, and on its median undisturbed round (weft
# validate's verdict on how far apart the ranks of a stage computed, and the stages relative to
# the calibrated simulation, docs/live.md). The pairs to validate are listed one file per line in
# $out/pairs.MODEL.KIND.
echo "== rounds (iteration time; spread of compute time between ranks doing the same work, and between stages relative to the simulation)"
rm -f "$out"/pairs.*
for name in "${names[@]}"; do
  rounds_of_plan=()
  for round in $(seq "$rounds"); do rounds_of_plan+=("$out/$name.calibrated.json" "$out/$name.live-$round.json"); done
  "$weft" validate "${rounds_of_plan[@]}" --json "$out/rounds.json" >/dev/null
  mapfile -t spreads < <(grep -o '"measured_rank_spread": *[0-9.e+-]*' "$out/rounds.json" | grep -o '[0-9.e+-]*$')
  mapfile -t stage_spreads < <(grep -o '"measured_stage_rate_spread": *[0-9.e+-]*' "$out/rounds.json" |
    grep -o '[0-9.e+-]*$')
  mapfile -t disturbed < <(grep -o '"measured_disturbed": *[a-z]*' "$out/rounds.json" | grep -o '[a-z]*$')
  all=""
  undisturbed=""
  for round in $(seq "$rounds"); do
    time_ns="$(makespan "$out/$name.live-$round.json")"
    echo "$name round $round: $time_ns ns, ranks ${spreads[round - 1]} apart, stages ${stage_spreads[round - 1]} apart"
    all+="$time_ns $round"$'\n'
    if [ "${disturbed[round - 1]}" = false ]; then undisturbed+="$time_ns $round"$'\n'; fi
  done
  for kind in all undisturbed; do
    chosen="$(printf '%s' "${!kind}" | median_round)"
    if [ -z "$chosen" ]; then
      echo "$name: no undisturbed round; left out of the undisturbed validation"
      continue
    fi
    cp "$out/$name.live-$chosen.json" "$out/$name.live-$kind.json"
    for model in default calibrated; do
      printf '%s\n%s\n' "$out/$name.$model.json" "$out/$name.live-$kind.json" >>"$out/pairs.$model.$kind"
    done
  done
done
rm -f "$out/rounds.json"

for kind in all undisturbed; do
  for model in default calibrated; do
    [ -f "$out/pairs.$model.$kind" ] || continue
    mapfile -t pairs <"$out/pairs.$model.$kind"
    echo "== $model model, median of $kind rounds"
    "$weft" validate "${pairs[@]}" --json "$out/validation.$model.$kind.json"
  done
done
