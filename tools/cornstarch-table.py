#!/usr/bin/env python3
"""Prints docs/context-parallel.md's comparison with Cornstarch's Table 4 (papers/004 §6.5).

Usage: tools/cornstarch-table.py    (weft on the PATH; tools/docs.py runs it so)

Runs `weft attention` on scenarios/experiments/cornstarch-llama3-70b-cp8-64xa40.json for 16K, 32K and 64K
tokens and the paper's three masks (EP, EE, MP), 50 random masks per row as the paper's evaluation draws,
and prints per row the paper's time and weft's for each distribution (the slowest rank's forward, ms),
weft's over the paper's minus 1, and the slowest distribution by each; then, over the pairs of distributions
whose times the paper tells apart by more than 2%, how many weft orders alike.

Then each row split in two as a line through its LPT and Naive Ring columns, time = floor + slope x
imbalance, where imbalance is the slowest rank's tiles over the ranks' mean as weft counts them for each
distribution: the slope is what a rank's attention costs at the mean tile count (the part that follows the
mask), the floor what does not follow it; the paper's and weft's, side by side.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from weft_runs import weft_json  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCENARIO = os.path.join(ROOT, "scenarios", "experiments", "cornstarch-llama3-70b-cp8-64xa40.json")
DISTRIBUTIONS = ["lpt", "random", "ring", "zigzag"]
HEADERS = {"lpt": "LPT", "random": "Random", "ring": "Naive Ring", "zigzag": "Zigzag"}
# papers/004, Table 4: attention time (ms) of one Llama 3.1 70B attention layer on 8 ranks.
PAPER = {
    (16384, "ep"): [3.92, 3.93, 4.24, 3.96],
    (16384, "ee"): [4.31, 4.32, 4.86, 4.37],
    (16384, "mp"): [3.00, 2.99, 3.12, 3.08],
    (32768, "ep"): [10.01, 10.07, 11.76, 10.21],
    (32768, "ee"): [11.12, 11.12, 13.43, 11.60],
    (32768, "mp"): [6.09, 6.18, 6.76, 6.57],
    (65536, "ep"): [25.43, 25.48, 32.24, 28.17],
    (65536, "ee"): [36.99, 37.12, 46.67, 37.36],
    (65536, "mp"): [14.18, 14.15, 16.56, 15.33],
}


def slowest(times):
    return HEADERS[DISTRIBUTIONS[max(range(len(times)), key=lambda i: times[i])]]


def line(times, imbalance):
    """(slope, floor) of the line through the LPT and Naive Ring columns against their tile imbalance."""
    lpt, ring = DISTRIBUTIONS.index("lpt"), DISTRIBUTIONS.index("ring")
    slope = (times[ring] - times[lpt]) / (imbalance[ring] - imbalance[lpt])
    return slope, times[lpt] - slope * imbalance[lpt]


def ordered_pairs(paper, weft):
    """(pairs the paper tells apart by more than 2%, of those the ones weft orders alike)."""
    apart = alike = 0
    for i in range(len(paper)):
        for j in range(i + 1, len(paper)):
            if abs(paper[i] / paper[j] - 1) <= 0.02:
                continue
            apart += 1
            alike += (paper[i] < paper[j]) == (weft[i] < weft[j])
    return apart, alike


def main():
    result = weft_json(["attention", SCENARIO, "--tokens", "16384,32768,65536", "--mask", "ep,ee,mp", "--masks", "50"])
    header = ["tokens", "mask"] + [f"{HEADERS[d]} paper / weft" for d in DISTRIBUTIONS] + ["slowest paper / weft"]
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join("---" for _ in header) + " |"]
    errors = []
    apart = alike = 0
    split = []
    for row in result["rows"]:
        paper = PAPER[(row["tokens"], row["mask"])]
        weft = [1e3 * row["distributions"][d]["forward_s"] for d in DISTRIBUTIONS]
        cells = [f"{row['tokens'] // 1024}K", row["mask"].upper()]
        for p, w in zip(paper, weft):
            errors.append(w / p - 1)
            cells.append(f"{p:.2f} / {w:.2f} ({100 * (w / p - 1):+.0f}%)")
        cells.append(f"{slowest(paper)} / {slowest(weft)}")
        imbalance = [row["distributions"][d]["tile_imbalance"] for d in DISTRIBUTIONS]
        split.append((cells[:2], line(paper, imbalance), line(weft, imbalance)))
        pairs = ordered_pairs(paper, weft)
        apart, alike = apart + pairs[0], alike + pairs[1]
        lines.append("| " + " | ".join(cells) + " |")
    print("\n".join(lines))
    mean = sum(abs(e) for e in errors) / len(errors)
    print(f"\nPairs of distributions the paper tells apart (more than 2%): {apart}; weft orders {alike} of them alike.")
    print(f"Mean |weft / paper - 1| over the {len(errors)} cells: {100 * mean:.1f}%; "
          f"worst {100 * max(errors, key=abs):+.1f}%.")
    print()
    header = ["tokens", "mask", "slope paper / weft (ms)", "floor paper / weft (ms)"]
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join("---" for _ in header) + " |"]
    for cells, (paper_slope, paper_floor), (weft_slope, weft_floor) in split:
        lines.append("| " + " | ".join(cells + [f"{paper_slope:.2f} / {weft_slope:.2f} ({100 * (weft_slope / paper_slope - 1):+.0f}%)",
                                                  f"{paper_floor:.2f} / {weft_floor:.2f}"]) + " |")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
