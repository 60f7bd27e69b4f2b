#!/usr/bin/env python3
"""Prints docs/experiments.md's large-scale DIP table (papers/001 Table 6 / Fig. 14).

Usage: tools/dip-large-scale-table.py    (weft on the PATH; tools/docs.py runs it so)

Runs `weft plan` on the bundled VLM-XL and T2V-XL scenarios (one DP replica's batch, 50 tree
expansions of a windowed search on 2 threads, so that the table does not depend on the machine) and
prints per scenario the stage model's iteration of each step of the ablation (the scenario's 1F1B,
+ partitioner and interleaving, + ranking, + layer tuning) and its speed-up, the interleaved 1F1B
baseline on the same stage model, the plan returned, and the full simulator's times of the
scenario's plan and of the returned plan as `weft live` runs it.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from weft_runs import weft_json  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CASES = [
    ("VLM-XL, 8,192 H100, DP128 TP8 PP8, 16 microbatches", "vlm-xl-8192xh100"),
    ("VLM-XL, 16,384 H100, DP128 TP8 PP16, 16 microbatches", "vlm-xl-16384xh100"),
    ("T2V-XL, 3,072 H100, DP96 TP8 PP4, 8 microbatches, full recompute", "t2v-xl-3072xh100"),
    ("T2V-XL, 6,144 H100, DP96 TP8 PP8, 8 microbatches, full recompute", "t2v-xl-6144xh100"),
]


def seconds(ms):
    return f"{ms / 1e3:.2f} s"


def main():
    print("| scenario | baseline (1F1B, stage model) | + partitioner, interleaving | + ranking | + layer tuning "
          "| speed-up | interleaved 1F1B (stage model) | returned | scenario's plan (full simulator) "
          "| returned plan as weft live runs it |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for name, case in CASES:
        scenario = os.path.join(ROOT, "scenarios", "experiments", case + ".json")
        plan = weft_json(["plan", scenario, "--window", "4", "--iterations", "50", "--threads", "2"])
        steps = [step["iteration_ms"] for step in plan["schedules"]]
        interleaved = [b["iteration_ms"] for b in plan["other_baselines"]]
        returned = "DIP" if not plan["returned_baseline"] else "interleaved 1F1B"
        print(f"| {name} | " + " | ".join(seconds(ms) for ms in steps) + f" | {steps[0] / steps[-1]:.2f}x "
              f"| {seconds(interleaved[0]) if interleaved else '—'} | {returned} "
              f"| {seconds(plan['simulated_baseline_ms'])} | {seconds(plan['simulated_plan_ms'])} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
