#!/usr/bin/env python3
"""Prints docs/experiments.md's table of DFLOP's layouts in weft's full simulation.

Usage: tools/dflop-full-table.py    (weft on the PATH; tools/docs.py runs it so)

Runs `weft dflop` on each bundled LLaVA-OneVision and InternVL-2.5 scenario (the ILP given 1 ms, as
tools/dflop-table.py runs it) and prints, from its "full_simulation" report, per model: the uniform
sample (the dataset's mean images and tokens), the scenario's hand-made layout's samples per second
in the full simulation, the speed-up over it of the best uniform layout and of DFLOP's layout (both
in the full simulation, on the same uniform samples), and how far the full simulation is from the
stage model on the same samples, for each layout.
"""
import os
import sys
from importlib import import_module

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
reports = import_module("dflop-table").reports


def main():
    print("| model | GPUs | uniform sample | hand layout, full simulation | best uniform | DFLOP's layout "
          "| full simulation over the stage model, per layout |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for name, report in reports():
        full = report["full_simulation"]
        by_layout = {}
        for run in full:
            for layout in run["layout"].split(" = "):
                by_layout[layout] = run
        hand = by_layout["the scenario's layout"]
        base = hand["samples_per_s"]
        sample = hand["sample"]
        dflop = by_layout["DFLOP's layout"]
        gaps = ", ".join(f"{run['iteration_s'] / run['stage_model_s'] - 1:+.1%}" for run in full)
        print(f"| {name} | {report['gpus']} | {sample['images']} images, {sample['tokens']} tokens "
              f"| {base:.1f} samples/s | {by_layout['best uniform layout']['samples_per_s'] / base:.2f}x "
              f"| {dflop['samples_per_s'] / base:.2f}x | {gaps} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
