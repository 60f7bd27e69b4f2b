#!/usr/bin/env python3
"""Prints docs/experiments.md's tables of Oobleck, Varuna and Bamboo under controlled failures (papers/002
Tables 2.2 and 2.4).

Usage: tools/oobleck-table.py [--checkpoint-cost]    (weft on the PATH; tools/docs.py runs it so)

Each row runs `weft goodput` on a bundled scenario of Oobleck's evaluation with one of the
controlled-failure files (scenarios/resilience/{oobleck,varuna,bamboo}-every-*.json) and reads its
JSON result: scenarios/experiments/<model>-30xa40-oobleck.json for Oobleck and Varuna,
<model>-30xa40-bamboo.json (microbatches of 1, 4 for BERT-Large; no activation checkpointing; redundant
computation)
for Bamboo. A Bamboo scenario that does not fit in memory gets one row saying so, from
`weft simulate --json`. The paper's columns are its Table 2.2 (throughput in samples/s on 30 A40
GPUs in TF32; "OOM" where Bamboo ran out of memory); the last, weft's samples/s over the paper's, minus 1.

With --checkpoint-cost it prints Table 2.4 instead: Varuna, Varuna without checkpointing overhead
(scenarios/resilience/varuna-no-checkpoint-cost-every-*.json: a checkpoint every 2 iterations whose
writing takes no time; restarts still reload it) and Oobleck, on BERT-Large and GPT-3 6.7B.
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


# papers/002, Table 2.4 (samples/s): Varuna, Varuna without checkpointing overhead, Oobleck.
PAPER_CHECKPOINT_COST = {
    "varuna": {"bert-large": {"6h": 260.11, "1h": 246.03, "10min": 173.52},
               "gpt3-6.7b": {"6h": 4.14, "1h": 2.69, "10min": 0.26}},
    "varuna-no-checkpoint-cost": {"bert-large": {"6h": 275.88, "1h": 273.85, "10min": 264.16},
                                  "gpt3-6.7b": {"6h": 4.61, "1h": 4.29, "10min": 1.98}},
    "oobleck": {"bert-large": {"6h": 287.10, "1h": 286.28, "10min": 282.11},
                "gpt3-6.7b": {"6h": 4.33, "1h": 4.22, "10min": 3.55}},
}


def scenario_of(policy, model):
    kind = "bamboo" if policy == "bamboo" else "oobleck"
    return os.path.join(ROOT, "scenarios", "experiments", f"{model}-30xa40-{kind}.json")


def samples_per_s(policy, model, frequency):
    """Mean goodput over the seeds of `weft goodput`, in samples a second."""
    scenario = scenario_of(policy, model)
    with open(scenario) as f:
        seq_len = json.load(f)["training"]["seq_len"]
    resilience = os.path.join(ROOT, "scenarios", "resilience", f"{policy}-every-{frequency}.json")
    return weft_json(["goodput", scenario, resilience])["goodput_tokens_per_s"]["mean"] / seq_len


def markdown(header, rows):
    return "\n".join(["| " + " | ".join(header) + " |", "| " + " | ".join("---" for _ in header) + " |"] +
                     ["| " + " | ".join(row) + " |" for row in rows])


def failures_table():
    """Table 2.2: each system and model at each failure frequency, and its fall from the 6 h rate."""
    rows = []
    for policy in POLICIES:
        for label, model in MODELS:
            paper = PAPER[policy][model]
            if policy == "bamboo" and (oom := out_of_memory(scenario_of(policy, model))):
                rows.append([policy, label, "any", oom, "", "OOM" if paper is None else "", "", ""])
                continue
            first = None
            for frequency in FREQUENCIES:
                samples = samples_per_s(policy, model, frequency)
                first = first or samples
                paper_cells = ["OOM", "", ""] if paper is None else [
                    f"{paper[frequency]:.2f}", f"{paper[frequency] / paper['6h']:.3f}",
                    f"{samples / paper[frequency] - 1:+.1%}"]
                rows.append([policy, label, frequency, f"{samples:.2f}", f"{samples / first:.3f}"] + paper_cells)
    return markdown(["policy", "model", "a node lost every", "weft: samples/s", "weft: of the 6 h rate",
                     "paper: samples/s", "paper: of the 6 h rate", "weft over paper"], rows)


def checkpoint_cost_table():
    """Table 2.4: Varuna with and without checkpointing overhead against Oobleck, against Oobleck's rate."""
    rows = []
    for label, model in [("BERT-Large", "bert-large"), ("GPT-3 6.7B", "gpt3-6.7b")]:
        for frequency in FREQUENCIES:
            oobleck = samples_per_s("oobleck", model, frequency)
            paper_oobleck = PAPER_CHECKPOINT_COST["oobleck"][model][frequency]
            for policy in PAPER_CHECKPOINT_COST:
                samples = oobleck if policy == "oobleck" else samples_per_s(policy, model, frequency)
                paper = PAPER_CHECKPOINT_COST[policy][model][frequency]
                rows.append([label, frequency, policy, f"{samples:.2f}", f"{samples / oobleck:.3f}", f"{paper:.2f}",
                             f"{paper / paper_oobleck:.3f}"])
    return markdown(["model", "a node lost every", "system", "weft: samples/s", "weft: of Oobleck's",
                     "paper: samples/s", "paper: of Oobleck's"], rows)


def main():
    arguments = sys.argv[1:]
    if arguments not in ([], ["--checkpoint-cost"]):
        print(__doc__.strip())
        return 0 if arguments and arguments[0] in ("-h", "--help") else 2
    print(checkpoint_cost_table() if arguments else failures_table())
    return 0


if __name__ == "__main__":
    sys.exit(main())
