#!/usr/bin/env python3
"""Prints the gaps between consecutive ops of each rank's compute stream in weft live's measured traces.

Usage: tools/trace-gaps.py MEASURED.json [...]

For each trace (weft live --trace), per track (pid, tid) with ops: the number of consecutive pairs,
and the median and sum of the time from one op's end to the next one's start, in microseconds. Where
the host was ahead, that is the device's gap between kernels queued back to back (docs/host-issue.md).
"""
import json
import statistics
import sys


def track_gaps(events):
    tracks = {}
    for e in events:
        if e.get("ph") == "X":
            tracks.setdefault((e["pid"], e["tid"]), []).append(e)
    for key, ops in sorted(tracks.items()):
        ops.sort(key=lambda e: e["ts"])
        yield key, [b["ts"] - (a["ts"] + a["dur"]) for a, b in zip(ops, ops[1:])]


def main():
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        sys.exit(0 if len(sys.argv) > 1 else 2)
    for path in sys.argv[1:]:
        with open(path) as f:
            trace = json.load(f)
        events = trace["traceEvents"] if isinstance(trace, dict) else trace
        for (pid, tid), gaps in track_gaps(events):
            if gaps:
                print(f"{path}: pid {pid} tid {tid}: {len(gaps)} gaps, median {statistics.median(gaps):.2f} us, "
                      f"total {sum(gaps):.1f} us")


if __name__ == "__main__":
    main()
