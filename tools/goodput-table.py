#!/usr/bin/env python3
"""Prints docs/experiments.md's table of Llama 3 405B runs over 30 days under Table 5's failures.

Usage: tools/goodput-table.py    (weft on the PATH; tools/docs.py runs it so)

Each row runs `weft goodput` on scenarios/experiments/llama3-405b-16384xh100.json with
scenarios/resilience/llama3-405b-table5.json (100 seeds, 30 days) and the row's flags, and reads its
JSON result.
"""
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCENARIO = os.path.join(ROOT, "scenarios", "experiments", "llama3-405b-16384xh100.json")
RESILIENCE = os.path.join(ROOT, "scenarios", "resilience", "llama3-405b-table5.json")

ROWS = [
    ("64 hot spares, interval searched (the file's)", []),
    ("64 hot spares, every 30 min", ["--checkpoint-interval", "30"]),
    ("64 hot spares, every 3 h", ["--checkpoint-interval", "180"]),
    ("32 hot spares, interval searched", ["--hot-spares", "32"]),
    ("16 hot spares, interval searched", ["--hot-spares", "16"]),
    ("no spare, interval searched", ["--hot-spares", "0"]),
]
PARTS = ["training lost", "checkpoints", "restarts and reloads", "waiting for repairs"]


def goodput(flags):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "goodput.json")
        subprocess.run(["weft", "goodput", SCENARIO, RESILIENCE, "--json", out] + flags, check=True,
                       stdout=subprocess.DEVNULL)
        with open(out) as f:
            return json.load(f)


def minutes(seconds):
    return f"{seconds / 60:.1f} min" if seconds < 7200 else f"{seconds / 3600:.1f} h"


def main():
    if len(sys.argv) != 1:
        print(__doc__.strip())
        return 0 if sys.argv[1] in ("-h", "--help") else 2
    header = ["recovery", "checkpoint every", "goodput, M tokens/s (p5 – p95)", "of the healthy run"]
    header += [f"{part} (h)" for part in PARTS]
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join("---" for _ in header) + " |"]
    for label, flags in ROWS:
        result = goodput(flags)
        spread = result["goodput_tokens_per_s"]
        cells = [label, minutes(result["checkpoint_interval_s"]),
                 f"{spread['mean'] / 1e6:.3f} ({spread['p5'] / 1e6:.3f} – {spread['p95'] / 1e6:.3f})",
                 f"{100 * result['healthy_share']['mean']:.1f}%"]
        cells += [f"{result['hours'][part]['mean']:.1f}" for part in PARTS]
        lines.append("| " + " | ".join(cells) + " |")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
