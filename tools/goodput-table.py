#!/usr/bin/env python3
"""Prints docs/experiments.md's table of Llama 3 405B runs over 30 days under Table 5's failures.

Usage: tools/goodput-table.py    (weft on the PATH; tools/docs.py runs it so)

Each row runs `weft goodput` on scenarios/experiments/llama3-405b-16384xh100.json with
scenarios/resilience/llama3-405b-table5.json (100 seeds, 30 days) and the row's flags, and reads its
JSON result. A row with a recovery policy of its own runs a copy of the resilience file with that
policy in place of the file's (the same failures).
"""
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCENARIO = os.path.join(ROOT, "scenarios", "experiments", "llama3-405b-16384xh100.json")
RESILIENCE = os.path.join(ROOT, "scenarios", "resilience", "llama3-405b-table5.json")

# Oobleck on the same failures: f = 1, a 30 s rebuild (as in the Table 2.2 replay), the minimal
# template set (n0 templates, searched two at a time: docs/resilience.md), checkpoints to the same
# storage for the failures it cannot ride through.
OOBLECK = {"policy": "oobleck", "fault_tolerance": 1, "reconfigure_seconds": 30, "templates": "minimal",
           "restart_minutes": 10,
           "checkpoint": {"interval_minutes": "auto", "mode": "sync", "write_GBps": 2000, "read_GBps": 2000}}
# Varuna on the same failures: its own search of layouts (docs/resilience.md), restarts and
# checkpoints as the file's.
VARUNA = {"policy": "varuna", "restart_minutes": 10,
          "checkpoint": {"interval_minutes": "auto", "mode": "sync", "write_GBps": 2000, "read_GBps": 2000}}
ROWS = [
    ("64 hot spares, interval searched (the file's)", [], None),
    ("64 hot spares, every 30 min", ["--checkpoint-interval", "30"], None),
    ("64 hot spares, every 3 h", ["--checkpoint-interval", "180"], None),
    ("32 hot spares, interval searched", ["--hot-spares", "32"], None),
    ("16 hot spares, interval searched", ["--hot-spares", "16"], None),
    ("no spare, interval searched", ["--hot-spares", "0"], None),
    ("Oobleck (f = 1), interval searched", [], OOBLECK),
    ("Varuna, interval searched", [], VARUNA),
]
PARTS = ["training lost", "checkpoints", "restarts and reloads", "waiting for repairs", "reconfiguration",
         "degraded throughput"]


def goodput(flags, recovery):
    with tempfile.TemporaryDirectory() as tmp:
        resilience = RESILIENCE
        if recovery is not None:
            with open(RESILIENCE) as f:
                spec = json.load(f)
            spec["recovery"] = recovery
            resilience = os.path.join(tmp, "resilience.json")
            with open(resilience, "w") as f:
                json.dump(spec, f)
        out = os.path.join(tmp, "goodput.json")
        subprocess.run(["weft", "goodput", SCENARIO, resilience, "--json", out] + flags, check=True,
                       stdout=subprocess.DEVNULL)
        with open(out) as f:
            return json.load(f)


def minutes(seconds):
    return f"{seconds / 60:.1f} min" if seconds < 7200 else f"{seconds / 3600:.1f} h"


def main():
    if len(sys.argv) != 1:
        print(__doc__.strip())
        return 0 if sys.argv[1] in ("-h", "--help") else 2
    header = ["recovery", "healthy iteration", "checkpoint every", "goodput, M tokens/s (p5 – p95)",
              "of the healthy run"]
    header += [f"{part} (h)" for part in PARTS]
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join("---" for _ in header) + " |"]
    for label, flags, recovery in ROWS:
        result = goodput(flags, recovery)
        spread = result["goodput_tokens_per_s"]
        cells = [label, f"{result['iteration_time_s']:.3f} s", minutes(result["checkpoint_interval_s"]),
                 f"{spread['mean'] / 1e6:.3f} ({spread['p5'] / 1e6:.3f} – {spread['p95'] / 1e6:.3f})",
                 f"{100 * result['healthy_share']['mean']:.1f}%"]
        cells += [f"{result['hours'][part]['mean']:.1f}" for part in PARTS]
        lines.append("| " + " | ".join(cells) + " |")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
