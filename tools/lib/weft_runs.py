"""Runs of the weft binary (on the PATH) for the table scripts of tools/: JSON results and memory verdicts."""
import json
import os
import subprocess
import tempfile


def weft_json(args, env=None):
    """Runs `weft ARGS --json FILE` (in `env`, by default this process's) and returns the file's JSON."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out.json")
        subprocess.run(["weft"] + args + ["--json", out], check=True, stdout=subprocess.DEVNULL, env=env)
        with open(out) as f:
            return json.load(f)


def out_of_memory(scenario):
    """Where `weft simulate` finds the scenario out of memory worst, as a table cell, or None when it fits."""
    stages = [s for s in weft_json(["simulate", scenario])["stages"] if s["oom"]]
    if not stages:
        return None
    worst = max(stages, key=lambda s: s["peak_memory_bytes"])
    gib = 1 << 30
    return (f"does not fit: {worst['peak_memory_bytes'] / gib:.2f} GiB on stage {worst['stage']} "
            f"of {worst['memory_capacity_bytes'] / gib:.0f} GiB")
