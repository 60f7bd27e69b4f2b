#!/usr/bin/env python3
"""Prints docs/experiments.md's table of Oobleck, Varuna and Bamboo under controlled failures (papers/002 Table 2.2).

Usage: tools/oobleck-table.py    (weft on the PATH; tools/docs.py runs it so)

Each row runs `weft goodput` on a bundled scenario of Oobleck's evaluation with one of the
controlled-failure files (scenarios/resilience/{oobleck,varuna,bamboo}-every-*.json) and reads its
JSON result: scenarios/experiments/<model>-30xa100-oobleck.json for Oobleck and Varuna,
<model>-30xa100-bamboo.json (microbatches of 1, no activation checkpointing, redundant computation)
for Bamboo. A Bamboo scenario that does not fit in memory gets one row saying so, from
`weft simulate --json`. The paper's columns are its Table 2.2 (throughput in samples/s on 30 A40
GPUs; "OOM" where Bamboo ran out of memory).
"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from weft_runs import out_of_memory, weft_json  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODELS = [("BERT-Large", "bert-large"), ("GPT-2 345M", "gpt2-345m"), ("GPT-3 Medium", "gpt3-medium"),
          ("GPT-3 2.7B", "gpt3-2.7b"), ("GPT-3 6.7B", "gpt3-6.7b")]
FREQUENCIES = ["6h", "1h", "10min"]
POLICIES = ["oobleck", "varuna", "bamboo"]
# papers/002, Table 2.2 (samples/s); None: out of memory.
PAPER = {
    "oobleck": {"bert-large": {"6h": 287.10, "1h": 286.28, "10min": 282.11},
                "gpt2-345m": {"6h": 85.59, "1h": 85.42, "10min": 84.80},
                "gpt3-medium": {"6h": 29.30, "1h": 29.21, "10min": 28.70},
                "gpt3-2.7b": {"6h": 7.29, "1h": 7.23, "10min": 6.89},
                "gpt3-6.7b": {"6h": 4.33, "1h": 4.22, "10min": 3.55}},
    "varuna": {"bert-large": {"6h": 260.11, "1h": 246.03, "10min": 173.52},
               "gpt2-345m": {"6h": 86.51, "1h": 85.17, "10min": 76.39},
               "gpt3-medium": {"6h": 29.50, "1h": 28.49, "10min": 20.19},
               "gpt3-2.7b": {"6h": 7.27, "1h": 6.53, "10min": 1.76},
               "gpt3-6.7b": {"6h": 4.14, "1h": 2.69, "10min": 0.26}},
    "bamboo": {"bert-large": {"6h": 77.04, "1h": 75.60, "10min": 69.84},
               "gpt2-345m": {"6h": 17.47, "1h": 17.13, "10min": 16.01},
               "gpt3-medium": None,
               "gpt3-2.7b": None,
               "gpt3-6.7b": None},
}


def scenario_of(policy, model):
    kind = "bamboo" if policy == "bamboo" else "oobleck"
    return os.path.join(ROOT, "scenarios", "experiments", f"{model}-30xa100-{kind}.json")


def main():
    if len(sys.argv) != 1:
        print(__doc__.strip())
        return 0 if sys.argv[1] in ("-h", "--help") else 2
    header = ["policy", "model", "a node lost every", "weft: samples/s", "weft: of the 6 h rate", "paper: samples/s",
              "paper: of the 6 h rate"]
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join("---" for _ in header) + " |"]
    for policy in POLICIES:
        for label, model in MODELS:
            scenario = scenario_of(policy, model)
            paper = PAPER[policy][model]
            if policy == "bamboo" and (oom := out_of_memory(scenario)):
                lines.append(f"| {policy} | {label} | any | {oom} | | {'OOM' if paper is None else ''} | |")
                continue
            with open(scenario) as f:
                seq_len = json.load(f)["training"]["seq_len"]
            first = None
            for frequency in FREQUENCIES:
                resilience = os.path.join(ROOT, "scenarios", "resilience", f"{policy}-every-{frequency}.json")
                result = weft_json(["goodput", scenario, resilience])
                samples = result["goodput_tokens_per_s"]["mean"] / seq_len
                first = first or samples
                paper_cells = ("OOM", "") if paper is None else (f"{paper[frequency]:.2f}",
                                                                 f"{paper[frequency] / paper['6h']:.3f}")
                lines.append(f"| {policy} | {label} | {frequency} | {samples:.2f} | {samples / first:.3f} | "
                             f"{paper_cells[0]} | {paper_cells[1]} |")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
