#!/usr/bin/env python3
"""Prints docs/experiments.md's DFLOP table (papers/003 §5: Fig. 7's throughput, Fig. 10's ablation).

Usage: tools/dflop-table.py    (weft on the PATH; tools/docs.py runs it so)

Runs `weft dflop` on each bundled LLaVA-OneVision and InternVL-2.5 scenario (4 batches of the mixed dataset) with the
scheduler's ILP given 1 ms, so that every batch takes LPT's split (or the ILP's where LPT already meets
the lower bound) and the table does not depend on the machine's speed; and prints per model the stage
model's iteration time of the scenario's hand-made uniform layout, and the speed-up over it of the best
uniform layout (Algorithm 1 over uniform layouts, random split), of DFLOP's layout with a random split
(the optimizer alone) and with its online scheduler (DFLOP); DFLOP's layout; and how far the stage model's
iteration is from the one Algorithm 1 expected.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from weft_runs import weft_json  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CASES = [
    ("LLaVA-OV (Qwen-2.5 7B)", "dflop-llava-ov-qwen2.5-7b-64xa100"),
    ("LLaVA-OV (Llama-3 8B)", "dflop-llava-ov-llama3-8b-32xa100"),
    ("LLaVA-OV (Llama-3 8B)", "dflop-llava-ov-llama3-8b-64xa100"),
    ("LLaVA-OV (Qwen-2.5 32B)", "dflop-llava-ov-qwen2.5-32b-64xa100"),
    ("LLaVA-OV (Llama-3 70B)", "dflop-llava-ov-llama3-70b-64xa100"),
    ("LLaVA-OV (Qwen-2.5 72B)", "dflop-llava-ov-qwen2.5-72b-64xa100"),
    ("InternVL-2.5 (Qwen-2.5 72B)", "dflop-internvl2.5-qwen2.5-72b-64xa100"),
]


def layout(plan):
    e, l = plan["encoder"], plan["llm"]
    return (f"E {e['tp']}/{e['pp']}/{e['dp']}, L {l['tp']}/{l['pp']}/{l['dp']}, "
            f"{plan['microbatches']} mb")


def reports():
    """(model name, `weft dflop --json` report) of each case, the ILP given 1 ms."""
    for name, case in CASES:
        scenario = os.path.join(ROOT, "scenarios", "experiments", case + ".json")
        yield name, weft_json(["dflop", scenario, "--ilp-seconds", "0.001"])


def main():
    print("| model | GPUs | hand layout (TP/PP/DP) | its iteration | best uniform | DFLOP's optimizer alone | DFLOP "
          "| DFLOP's layout (TP/PP/DP, microbatches) | stage model over Algorithm 1's expectation |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for name, report in reports():
        runs = report["runs"]
        hand, uniform, alone, dflop = runs[0], runs[1], runs[2], runs[3]
        base = hand["mean_iteration_s"]
        p = hand["plan"]
        expected = dflop["plan"]["expected_iteration_s"]
        print(f"| {name} | {report['gpus']} | {p['encoder']['tp']}/{p['encoder']['pp'] + p['llm']['pp']}/"
              f"{p['encoder']['dp']} | {base:.1f} s | {base / uniform['mean_iteration_s']:.2f}x "
              f"| {base / alone['mean_iteration_s']:.2f}x | {base / dflop['mean_iteration_s']:.2f}x "
              f"| {layout(dflop['plan'])} | {dflop['mean_iteration_s'] / expected - 1:+.0%} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
