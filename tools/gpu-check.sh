#!/usr/bin/env bash
# A GPU owner's check of weft on their machine, in one command (docs/live.md):
#   tools/gpu-check.sh [OPTIONS] OUT_DIR
# measures the device (weft bench: the suite's GEMMs, attention and memory-bound ops, and each
# scenario's own ops with --scenario), fits a profile of them all (weft calibrate), simulates each scenario with it (weft simulate --emit-plan), runs the plan for
# real (weft live) and compares the two (weft validate). OUT_DIR receives every file, and
# report.md: per scenario the simulated and measured iteration, compute per stage and op time
# per class, and one verdict line. Exits 0 when every iteration is within the tolerance, 1 when
# one is not, 2 on a usage error or a failed step.
# Options:
#   --weft PATH        the weft binary (default build/tools/weft; a bundle's bin/weft on a GPU machine)
#   --backend NAME     cuda (default) or cpu
#   --scenario NAME    a scenario of scenarios/experiments or a file; repeat for several (default
#                      on cuda gpt-4l-512-1xGPU, gpt3-1.3b-1xGPU and llama3-8b-4l-1xGPU, GPU h200 where
#                      weft info finds an NVIDIA H200, else h100; cpu-gpt-dp2 on cpu)
#   --launcher CMD     prefix of the commands that run on every rank, e.g. "mpirun -np 8"
#                      (default: none, one rank)
#   --quick            the bench's quick suite and 1 + 2 live iterations (a few seconds per step)
#   --warmup N         live's warm-up iterations (default 2)
#   --iterations N     live's timed iterations (default 5)
#   --tolerance PCT    largest |iteration error| that passes (default 10)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/setup.sh"
weft_help_if_asked "$@"

weft="$WEFT_ROOT/build/tools/weft"
backend=cuda
scenarios=()
launcher=()
quick=()
warmup=2
iterations=5
tolerance=10
out=
while [ $# -gt 0 ]; do
  case "$1" in
    --weft) weft="$2"; shift 2 ;;
    --backend) backend="$2"; shift 2 ;;
    --scenario) scenarios+=("$2"); shift 2 ;;
    --launcher) read -r -a launcher <<<"$2"; shift 2 ;;
    --quick) quick=(--quick); warmup=1; iterations=2; shift ;;
    --warmup) warmup="$2"; shift 2 ;;
    --iterations) iterations="$2"; shift 2 ;;
    --tolerance) tolerance="$2"; shift 2 ;;
    -*) echo "tools/gpu-check.sh: unknown option $1" >&2; weft_usage ;;
    *) [ -z "$out" ] || weft_usage; out="$1"; shift ;;
  esac
done
[ -n "$out" ] || weft_usage
case "$backend" in cuda | cpu) ;; *) echo "tools/gpu-check.sh: --backend is cuda or cpu, not '$backend'" >&2; exit 2 ;; esac
weft_require_positive_integer --tolerance "$tolerance"
weft_require_positive_integer --iterations "$iterations"
case "$warmup" in '' | *[!0-9]*) echo "tools/gpu-check.sh: --warmup must be a whole number, not '$warmup'" >&2; exit 2 ;; esac
# Under a launcher the ranks also measure collectives and point-to-point messages.
parts=gemm,attention,memory
[ ${#launcher[@]} -eq 0 ] || parts+=,collectives,p2p
[ -x "$weft" ] || { echo "tools/gpu-check.sh: no weft binary at $weft (--weft PATH)" >&2; exit 2; }
[ ${#scenarios[@]} -gt 0 ] || [ "$backend" = cuda ] || scenarios=(cpu-gpt-dp2)

mkdir -p "$out"
step() {  # NAME COMMAND...: runs a step, its output kept in OUT_DIR/NAME.log
  local name="$1"
  shift
  echo "== $name: $*"
  if ! "$@" >"$out/$name.log" 2>&1; then
    cat "$out/$name.log" >&2
    echo "tools/gpu-check.sh: step '$name' failed (log: $out/$name.log)" >&2
    exit 2
  fi
  tail -n 3 "$out/$name.log"
}

step info "$weft" info
if [ ${#scenarios[@]} -eq 0 ]; then
  # The one-GPU plans of the GPU weft info found: a profile measured on one GPU prices only its spec.
  gpu=h100
  grep -q "device: NVIDIA H200" "$out/info.log" && gpu=h200
  scenarios=("gpt-4l-512-1x$gpu" "gpt3-1.3b-1x$gpu" "llama3-8b-4l-1x$gpu")
fi
step bench "${launcher[@]}" "$weft" bench --backend "$backend" "${quick[@]}" --parts "$parts" --dtypes bf16 \
  -o "$out/measurements.json"
# Each scenario's own shapes too: the profile then prices the ops it runs by their own measurements.
measurements=("$out/measurements.json")
samples=()
[ ${#quick[@]} -eq 0 ] || samples=(--samples 2)
for i in "${!scenarios[@]}"; do
  name="$(basename "${scenarios[$i]}" .json)"
  [ -f "${scenarios[$i]}" ] || scenarios[i]="$WEFT_ROOT/scenarios/experiments/$name.json"
  step "$name.bench" "${launcher[@]}" "$weft" bench --backend "$backend" --scenario "${scenarios[$i]}" \
    --parts "$parts" "${samples[@]}" -o "$out/$name.measurements.json"
  measurements+=("$out/$name.measurements.json")
done
step calibrate "$weft" calibrate "${measurements[@]}" -o "$out/profile.json"

traces=()
for scenario in "${scenarios[@]}"; do
  name="$(basename "$scenario" .json)"
  step "$name.simulate" "$weft" simulate "$scenario" --calibration "$out/profile.json" \
    --emit-plan "$out/$name.plan.json" --trace "$out/$name.simulated.json"
  step "$name.live" "${launcher[@]}" "$weft" live "$out/$name.plan.json" --backend "$backend" \
    --warmup "$warmup" --iterations "$iterations" --trace "$out/$name.measured.json"
  traces+=("$out/$name.simulated.json" "$out/$name.measured.json")
done
step validate "$weft" validate "${traces[@]}" --json "$out/validation.json"

python3 - "$out" "$tolerance" "$backend" <<'REPORT'
import json, sys
out, tolerance, backend = sys.argv[1], float(sys.argv[2]), sys.argv[3]
device = open(f"{out}/info.log").read().strip().splitlines()
pairs = json.load(open(f"{out}/validation.json"))["pairs"]
lines = [f"# weft on this machine ({backend} backend)", "", "```", *device, "```", ""]
worst = 0.0
for pair in pairs:
    name = pair["measured"].rsplit("/", 1)[-1].removesuffix(".measured.json")
    lines += [f"## {name}", "", "| what | simulated (ms) | measured (ms) | error |", "| --- | ---: | ---: | ---: |"]
    for row in [pair["iteration"], *pair["stages"], *pair["classes"]]:
        lines.append(f"| {row['name']} | {1e3 * row['simulated_s']:.3f} | {1e3 * row['measured_s']:.3f} "
                     f"| {100 * row['error']:+.1f}% |")
    lines.append("")
    worst = max(worst, abs(pair["iteration"]["error"]))
verdict = "PASS" if 100 * worst <= tolerance else "FAIL"
lines.append(f"gpu-check: {verdict}: the worst |iteration error| of {len(pairs)} plan(s) is {100 * worst:.1f}% "
             f"(tolerance {tolerance:g}%)")
open(f"{out}/report.md", "w").write("\n".join(lines) + "\n")
print(lines[-1])
sys.exit(0 if verdict == "PASS" else 1)
REPORT
