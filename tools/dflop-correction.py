#!/usr/bin/env python3
"""Prints docs/experiments.md's table of DFLOP's adaptive correction (papers/003 §5.3.7, Fig. 15).

Usage: tools/dflop-correction.py    (weft on the PATH; tools/docs.py runs it so)

Runs `weft dflop` on scenarios/experiments/dflop-llava-ov-llama3-8b-32xa100.json over 8 batches with the
anomalies of Fig. 15: 1%, 3% and 5% of the input shapes delayed by 25% to 100% of the plan's largest expected
stage duration (the ILP given 1 ms, so that the table does not depend on the machine's speed). Per cell, the
net speed-up of DFLOP with adaptive correction over DFLOP's scheduler alone on the same batches (its gain less
tracking's 4% while it runs), and the last batch tracking ran in.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from weft_runs import weft_json  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCENARIO = os.path.join(ROOT, "scenarios", "experiments", "dflop-llava-ov-llama3-8b-32xa100.json")
RATES = [0.01, 0.03, 0.05]
LATENCIES = [0.25, 0.5, 0.75, 1.0]
BATCHES = 8


def main():
    print("| anomaly rate | " + " | ".join(f"latency {int(l * 100)}%" for l in LATENCIES) + " |")
    print("| --- |" + " --- |" * len(LATENCIES))
    for rate in RATES:
        cells = []
        for latency in LATENCIES:
            report = weft_json(["dflop", SCENARIO, "--iterations", str(BATCHES), "--ilp-seconds", "0.001",
                                "--anomalies", f"{rate},{latency}"])
            scheduler, corrected = report["runs"][3], report["runs"][4]
            net = scheduler["mean_iteration_s"] / corrected["mean_iteration_s"] - 1
            tracked = [k + 1 for k, step in enumerate(report["correction"]) if step["tracking"]]
            cells.append(f"{net:+.1%}, tracking to batch {tracked[-1]}")
        print(f"| {rate:.0%} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
