#!/usr/bin/env python3
"""Sets PyTorch's training steps, as tools/pytorch-steps.py measured them on a GPU, beside weft's.

Usage: tools/pytorch-steps-report.py RECORD_DIR [--weft PATH]

RECORD_DIR holds pytorch-steps.json. For each case that ran, weft simulates its scenario
(scenarios/experiments/pytorch-CASE-1xGPU.json, GPU h200 or h100 as the record's device) with the
shipped defaults and writes a trace; the report gives per case the measured step (the median of
the timed steps), the time the device was busy in the profiled steps, weft's iteration and its
error (weft's time over the measured one, minus 1: negative means weft predicts a faster step),
the peak memory (the caching allocator's reservation against weft's peak without the CUDA
context, which the reservation leaves out), then per kernel class the device time of a profiled
step against the time weft's trace gives that class.
"""
import argparse
import json
import os
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools", "lib"))
from weft_runs import weft_json  # noqa: E402
# weft's op classes, gathered into the classes tools/pytorch-steps.py gives kernels.
WEFT_CLASS = {"gemm": "gemm", "attention_fwd": "attention", "attention_bwd": "attention", "norm": "norm",
              "loss": "loss", "optimizer": "optimizer", "elementwise": "other", "embedding": "other",
              "other": "other", "memcpy": "other", "allreduce": "nccl", "allgather": "nccl",
              "reducescatter": "nccl", "alltoall": "nccl", "broadcast": "nccl", "send": "nccl", "recv": "nccl"}
CLASSES = ["gemm", "attention", "norm", "loss", "optimizer", "other", "nccl"]


def measured_classes(step):
    """A profiled step's device time per class in ms; copies and memsets count as `other`."""
    totals = dict.fromkeys(CLASSES, 0.0)
    for name, entry in step["classes"].items():
        totals[name if name in totals else "other"] += entry["us"] / 1e3
    return totals


def weft_run(scenario, directory):
    """weft's report and its trace's device time per class (ms) for one scenario."""
    trace_path = os.path.join(directory, "trace.json")
    report = weft_json(["simulate", scenario, "--trace", trace_path])
    with open(trace_path) as f:
        events = json.load(f)["traceEvents"]
    totals = dict.fromkeys(CLASSES, 0.0)
    for event in events:
        op_class = event.get("args", {}).get("class")
        if event.get("ph") == "X" and op_class in WEFT_CLASS:
            totals[WEFT_CLASS[op_class]] += event["dur"] / 1e3
    return report, totals


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("record")
    parser.add_argument("--weft", default=os.path.join(ROOT, "build", "tools", "weft"))
    args = parser.parse_args()
    # weft_json runs the weft on the PATH.
    os.environ["PATH"] = os.path.dirname(os.path.abspath(args.weft)) + os.pathsep + os.environ.get("PATH", "")
    with open(os.path.join(args.record, "pytorch-steps.json")) as f:
        record = json.load(f)
    gpu = "h200" if "H200" in record["device"] else "h100"
    print(f"PyTorch {record['torch']} on {record['device']} ({args.record}), against weft simulate with the "
          f"shipped defaults")
    print(f"  {'case':<24}{'measured step':>15}{'device busy':>13}{'weft':>11}{'error':>9}"
          f"{'peak reserved':>15}{'weft peak':>11}{'error':>9}")
    breakdowns = []
    with tempfile.TemporaryDirectory() as scratch:
        for case in record["cases"]:
            if "error" in case:
                print(f"  {case['case']:<24}did not run: {case['error']}")
                continue
            scenario = os.path.join(ROOT, "scenarios", "experiments", f"pytorch-{case['case']}-1x{gpu}.json")
            if not os.path.exists(scenario):
                print(f"  {case['case']:<24}no weft scenario of it on this GPU ({os.path.relpath(scenario, ROOT)})")
                continue
            report, weft_classes = weft_run(scenario, scratch)
            measured_ms, weft_ms = case["median_step_ms"], 1e3 * report["iteration_time_s"]
            busy_ms = min(s["device_busy_us"] for s in case["profiled_steps"]) / 1e3
            stage = report["stages"][0]
            weft_peak = stage["peak_memory_bytes"] - stage["memory_breakdown_bytes"]["framework_overhead"]
            reserved = case["peak_reserved_bytes"]
            if case.get("fsdp_error"):
                print(f"  {case['case']:<24}ran without FSDP2 ({case['fsdp_error']}): its scenario assumes FSDP2")
            print(f"  {case['case']:<24}{measured_ms:>12.1f} ms{busy_ms:>10.1f} ms{weft_ms:>8.1f} ms"
                  f"{weft_ms / measured_ms - 1:>+9.1%}{reserved / 2**30:>11.2f} GiB{weft_peak / 2**30:>7.2f} GiB"
                  f"{weft_peak / reserved - 1:>+9.1%}")
            step = min(case["profiled_steps"], key=lambda s: s["device_busy_us"])
            breakdowns.append((case["case"], measured_classes(step), weft_classes, step))
    print("\nDevice time per step by kernel class, ms: measured / weft")
    print(f"  {'case':<24}" + "".join(f"{name:>17}" for name in CLASSES) + f"{'idle':>9}{'kernels':>9}")
    for name, measured, weft, step in breakdowns:
        cells = "".join(f"{f'{measured[c]:.1f} / {weft[c]:.1f}':>17}" for c in CLASSES)
        idle = (step["device_span_us"] - step["device_busy_us"]) / 1e3
        print(f"  {name:<24}{cells}{idle:>9.1f}{step['device_events']:>9}")


if __name__ == "__main__":
    sys.exit(main())
