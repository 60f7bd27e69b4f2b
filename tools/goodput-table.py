#!/usr/bin/env python3
"""Prints docs/experiments.md's table of Llama 3 405B runs over 30 days under its published interruptions.

Usage: tools/goodput-table.py    (weft on the PATH; tools/docs.py runs it so)

Each row runs `weft goodput` on scenarios/experiments/llama3-405b-16384xh100.json with
scenarios/resilience/llama3-405b-table5.json (100 seeds, 30 days) and the row's flags, and reads its
JSON result. A row with a recovery policy or planned stops of its own runs a copy of the resilience
file with those in place of the file's (the same failures). Bamboo's row runs a copy of the scenario in
1F1B (Bamboo's schedule) with redundant computation; where `weft simulate` finds that it does not
fit in memory, the row says so.
"""
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from weft_runs import out_of_memory, weft_json  # noqa: E402

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
# The same, its repaired nodes waiting for the next failure's restart instead of a morph of their own.
VARUNA_NO_MORPH = dict(VARUNA, morph_on_return=False)
# Bamboo on the same failures: Meta's layout in 1F1B with 7 or 8 layers a stage (no interleaving:
# Bamboo runs 1F1B), each stage backing up the next, takeovers pausing 30 s (docs/resilience.md).
BAMBOO = {"policy": "bamboo", "reconfigure_seconds": 30, "restart_minutes": 10,
          "checkpoint": {"interval_minutes": "auto", "mode": "sync", "write_GBps": 2000, "read_GBps": 2000}}
BAMBOO_PLAN = {"schedule": "1f1b", "vpp": 1, "stage_layers": [7] + [8] * 14 + [7], "redundant_computation": True}
# The file's planned stops (47 in 54 days) with a downtime of an hour each instead of none.
PLANNED_1H = [{"name": "Planned maintenance", "observed": {"count": 47, "days": 54, "gpus": 16384}, "hours": 1}]
# (label, flags, recovery policy, planned stops); None: the file's.
ROWS = [
    ("64 hot spares, interval searched (the file's)", [], None, None),
    ("64 hot spares, without the planned stops", [], None, []),
    ("64 hot spares, planned stops down 1 h each", [], None, PLANNED_1H),
    ("64 hot spares, every 30 min", ["--checkpoint-interval", "30"], None, None),
    ("64 hot spares, every 3 h", ["--checkpoint-interval", "180"], None, None),
    ("32 hot spares, interval searched", ["--hot-spares", "32"], None, None),
    ("16 hot spares, interval searched", ["--hot-spares", "16"], None, None),
    ("no spare, interval searched", ["--hot-spares", "0"], None, None),
    ("Oobleck (f = 1), interval searched", [], OOBLECK, None),
    ("Varuna, interval searched", [], VARUNA, None),
    ("Varuna, repaired nodes kept for the next restart", [], VARUNA_NO_MORPH, None),
    ("Bamboo (1F1B, 7 or 8 layers a stage), interval searched", [], BAMBOO, None),
]
PARTS = ["training lost", "checkpoints", "restarts and reloads", "waiting for repairs", "planned maintenance",
         "reconfiguration", "degraded throughput"]


def bamboo_scenario(tmp):
    with open(SCENARIO) as f:
        scenario = json.load(f)
    scenario["parallel"].update(BAMBOO_PLAN)
    path = os.path.join(tmp, "scenario.json")
    with open(path, "w") as f:
        json.dump(scenario, f)
    return path


def goodput(flags, recovery, planned):
    """The row's `weft goodput` JSON, or a string saying why it has none."""
    with tempfile.TemporaryDirectory() as tmp:
        scenario = SCENARIO
        if recovery is BAMBOO:
            scenario = bamboo_scenario(tmp)
            if oom := out_of_memory(scenario):
                return oom
        resilience = RESILIENCE
        if recovery is not None or planned is not None:
            with open(RESILIENCE) as f:
                spec = json.load(f)
            if recovery is not None:
                spec["recovery"] = recovery
            if planned == []:
                del spec["failures"]["planned"]
            elif planned is not None:
                spec["failures"]["planned"] = planned
            resilience = os.path.join(tmp, "resilience.json")
            with open(resilience, "w") as f:
                json.dump(spec, f)
        return weft_json(["goodput", scenario, resilience] + flags)


def minutes(seconds):
    return f"{seconds / 60:.1f} min" if seconds < 7200 else f"{seconds / 3600:.1f} h"


def main():
    if len(sys.argv) != 1:
        print(__doc__.strip())
        return 0 if sys.argv[1] in ("-h", "--help") else 2
    header = ["recovery", "healthy iteration", "checkpoint every", "goodput, M tokens/s (p5 – p95)",
              "of the healthy run", "planned stops"]
    header += [f"{part} (h)" for part in PARTS]
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join("---" for _ in header) + " |"]
    for label, flags, recovery, planned in ROWS:
        result = goodput(flags, recovery, planned)
        if isinstance(result, str):
            lines.append("| " + " | ".join([label, result] + [""] * (len(header) - 2)) + " |")
            continue
        spread = result["goodput_tokens_per_s"]
        cells = [label, f"{result['iteration_time_s']:.3f} s", minutes(result["checkpoint_interval_s"]),
                 f"{spread['mean'] / 1e6:.3f} ({spread['p5'] / 1e6:.3f} – {spread['p95'] / 1e6:.3f})",
                 f"{100 * result['healthy_share']['mean']:.1f}%", f"{result['planned_stops']['mean']:.1f}"]
        cells += [f"{result['hours'][part]['mean']:.1f}" for part in PARTS]
        lines.append("| " + " | ".join(cells) + " |")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
