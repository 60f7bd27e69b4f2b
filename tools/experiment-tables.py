#!/usr/bin/env python3
"""Prints a table of docs/experiments.md from what the build's `weft simulate` prints for its scenarios.

Usage: tools/experiment-tables.py TABLE    (weft on the PATH; tools/docs.py runs it so)

TABLE is one of: dense, multimodal, schedules, partitions. Each row simulates one bundled experiment
(scenarios/experiments/, folded, with the shipped defaults) and reads weft's JSON result; the text
columns (plan, published figures) are the scenario's as the docs describe it.
"""
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def simulate(name):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "result.json")
        subprocess.run(["weft", "simulate", os.path.join(ROOT, "scenarios", "experiments", name + ".json"), "--json",
                        out], check=True, stdout=subprocess.DEVNULL)
        with open(out) as f:
            return json.load(f)


def seconds(value):
    return f"{value:.2f} s"


def percent(value):
    return f"{100 * value:.1f}%"


def gib(value):
    return f"{value / 2**30:.1f}"


def layers(result):
    return "/".join(str(n) for n in result["parallel"]["stage_layers"])


def compute_range(result):
    times = [s["compute_s"] for s in result["stages"]]
    return f"{min(times):.2f} s – {max(times):.2f} s"


def memory_range(result):
    peaks = [s["peak_memory_bytes"] for s in result["stages"]]
    return f"{gib(min(peaks))} / {gib(max(peaks))} GiB"


def table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join("---" for _ in header) + " |"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    print("\n".join(lines))


DENSE = [
    ("gpt3-175b-1024xa100", "GPT-3 175B, 1,024 A100 80GB, `megatron-lm-2021` stack",
     "TP8 PP16 DP8, 1F1B, full recompute, batch 1536 x 2048",
     "32 s per iteration, 138 TFLOP/s per GPU counting recomputation (Megatron-LM README, 2021), about 33% MFU"),
    ("llama3-70b-512xh100", "Llama 3 70B, 512 H100", "TP8 PP4 DP16, 1F1B, SP, ZeRO-1, batch 512 x 8192", "—"),
    ("llama3-70b-1024xh100", "Llama 3 70B, 1,024 H100", "TP8 PP4 DP32, 1F1B, SP, ZeRO-1, batch 512 x 8192", "—"),
    ("llama3-405b-16384xh100", "Llama 3 405B, 16,384 H100",
     "TP8 PP16 DP128, interleaved (2 chunks), SP, ZeRO-2, batch 2048 x 8192",
     "38–43% BF16 MFU (Dubey et al. 2024, Table 4)"),
]

MULTIMODAL = [
    ("vlm-s-16xh800", "VLM-S, 16 H800, TP4 PP4"),
    ("vlm-m-32xh800", "VLM-M, 32 H800, TP8 PP4"),
    ("vlm-l-64xh800", "VLM-L, 64 H800, TP8 PP8"),
    ("vlm-xl-8192xh100", "VLM-XL, 8,192 H100, TP8 PP8 DP128"),
    ("t2v-s-16xh800", "T2V-S, 16 H800, TP4 PP4, full recompute"),
    ("t2v-l-64xh800", "T2V-L, 64 H800, TP8 PP8, full recompute"),
    ("t2v-xl-3072xh100", "T2V-XL, 3,072 H100, TP8 PP4 DP96, full recompute"),
]

SCHEDULES = [
    ("vlm-s-16xh800", "Megatron 1F1B, stages balanced by parameters"),
    ("vlm-s-16xh800-interleaved", "Megatron interleaved 1F1B, 8 virtual stages balanced by parameters"),
    ("vlm-s-16xh800-encoder-first", "encoder-first (vision on every stage's first chunk), full recompute"),
]

PARTITIONS = [
    ("vlm-s-16xh800", "all trainable, balanced by parameters"),
    ("vlm-s-16xh800-time", "all trainable, balanced by compute time"),
    ("vlm-s-frozen-16xh800", "vision and language frozen, balanced by parameters"),
    ("vlm-s-frozen-16xh800-time", "frozen, balanced by compute time under the frozen rule"),
]


def peak(result):
    worst = max(s["peak_memory_bytes"] for s in result["stages"])
    return f"{gib(worst)} GiB" + (": out of memory" if result["oom"] else "")


def main():
    if len(sys.argv) != 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if len(sys.argv) == 2 else 2
    which = sys.argv[1]
    if which == "dense":
        rows = []
        for name, scenario, plan, published in DENSE:
            r = simulate(name)
            rows.append([scenario, plan, seconds(r["iteration_time_s"]), percent(r["mfu"]), published])
        table(["scenario", "plan", "simulated iteration", "simulated MFU", "published"], rows)
    elif which == "multimodal":
        rows = []
        for name, scenario in MULTIMODAL:
            r = simulate(name)
            rows.append([scenario, layers(r), seconds(r["iteration_time_s"]), percent(r["mfu"]), compute_range(r),
                         memory_range(r)])
        table(["scenario", "stage layers", "iteration", "MFU", "compute per stage (least – most)",
               "peak memory per stage (least / most)"], rows)
    elif which == "schedules":
        rows = []
        for name, schedule in SCHEDULES:
            r = simulate(name)
            rows.append([schedule, layers(r), seconds(r["iteration_time_s"]), percent(r["mfu"]), peak(r)])
        table(["schedule (VLM-S, 16 H800, TP4 PP4)", "stage layers", "iteration", "MFU", "peak memory"], rows)
    elif which == "partitions":
        rows = []
        for name, what in PARTITIONS:
            r = simulate(name)
            rows.append([what, layers(r), seconds(r["iteration_time_s"]), percent(r["mfu"])])
        table(["VLM-S, 16 H800, TP4 PP4, 1F1B", "stage layers", "iteration", "MFU"], rows)
    else:
        print(f"tools/experiment-tables.py: unknown table '{which}' (expected dense, multimodal, schedules or "
              "partitions)", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
