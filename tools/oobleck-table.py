#!/usr/bin/env python3
"""Prints docs/experiments.md's table of Oobleck and Varuna under controlled failures (papers/002 Table 2.2).

Usage: tools/oobleck-table.py    (weft on the PATH; tools/docs.py runs it so)

Each row runs `weft goodput` on a bundled GPT-3 scenario of Oobleck's evaluation
(scenarios/experiments/gpt3-*-30xa100-oobleck.json) with one of the controlled-failure files
(scenarios/resilience/{oobleck,varuna}-every-*.json) and reads its JSON result. The paper's columns
are its Table 2.2 (throughput in samples/s on 30 A40 GPUs).
"""
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODELS = [("GPT-3 2.7B", "gpt3-2.7b"), ("GPT-3 6.7B", "gpt3-6.7b")]
FREQUENCIES = ["6h", "1h", "10min"]
POLICIES = ["oobleck", "varuna"]
# papers/002, Table 2.2 (samples/s).
PAPER = {
    "oobleck": {"gpt3-2.7b": {"6h": 7.29, "1h": 7.23, "10min": 6.89},
                "gpt3-6.7b": {"6h": 4.33, "1h": 4.22, "10min": 3.55}},
    "varuna": {"gpt3-2.7b": {"6h": 7.27, "1h": 6.53, "10min": 1.76},
               "gpt3-6.7b": {"6h": 4.14, "1h": 2.69, "10min": 0.26}},
}


def goodput(policy, model, frequency):
    scenario = os.path.join(ROOT, "scenarios", "experiments", f"{model}-30xa100-oobleck.json")
    resilience = os.path.join(ROOT, "scenarios", "resilience", f"{policy}-every-{frequency}.json")
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "goodput.json")
        subprocess.run(["weft", "goodput", scenario, resilience, "--json", out], check=True, stdout=subprocess.DEVNULL)
        with open(out) as f:
            return json.load(f)


def main():
    if len(sys.argv) != 1:
        print(__doc__.strip())
        return 0 if sys.argv[1] in ("-h", "--help") else 2
    header = ["policy", "model", "a node lost every", "weft: samples/s", "weft: of the 6 h rate", "paper: samples/s",
              "paper: of the 6 h rate"]
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join("---" for _ in header) + " |"]
    for policy in POLICIES:
        for label, model in MODELS:
            first = None
            for frequency in FREQUENCIES:
                result = goodput(policy, model, frequency)
                samples = result["goodput_tokens_per_s"]["mean"] * 1024 / result["tokens_per_iteration"]
                first = first or samples
                paper = PAPER[policy][model]
                lines.append(f"| {policy} | {label} | {frequency} | {samples:.2f} | {samples / first:.3f} | "
                             f"{paper[frequency]:.2f} | {paper[frequency] / paper['6h']:.3f} |")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
