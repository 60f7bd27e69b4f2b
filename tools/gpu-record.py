#!/usr/bin/env python3
"""Prints the kernel-level checks of a GPU record (docs/calibration.md, "On an H100").

Usage: tools/gpu-record.py RECORD_DIR

RECORD_DIR (scenarios/measurements/live/<gpu>-<date>/) holds what tools/gpu-check.sh wrote on one
GPU machine, and what ran beside it there:
  bench.json                       weft bench's suite
  <scenario>.bench.json            weft bench --scenario: the scenario's own ops, labelled by the
                                   first op that runs each shape
  <scenario>.measured.json         weft live's timeline of the scenario's plan
  pytorch-kernels.json             shared/gpu/kernels_ref.py on the same GPU, right after (optional)
  bench-sustained.json,            weft bench --sample-ms 50 (optional): the suite, and a scenario's
  <scenario>.bench-sustained.json  ops, each sample 50 ms of calls back to back
  clocks.csv, phases.json          nvidia-smi's SM clock, power and utilisation every 200 ms, and
                                   the time windows of the steps that loaded the GPU
  sustained.json, sustained.csv    tools/gpu-sustained.py: kernel classes run back to back for 4 s
  <scenario>.repeat-<n>.measured.json  more weft live runs of a scenario's plan (optional)
  flex-tiles*.json, flex-profiler.json  tools/flex-tiles.py: FlexAttention's full and partial tiles (a
                                   file per run), and the work of Cornstarch's profiler per call (optional)

It prints three checks: weft live's span of each op shape against the bench's time for the same
shape (median over the ops of that shape); weft bench's GEMM and cuDNN attention times against
PyTorch's for the same shapes (shapes whose bench time is 30 us or more: PyTorch eager calls
shorter than about 15 us time its host, not the kernel); the SM clock and power in each phase;
and, where the record has them, each class's throughput, clock and power run back to back.
"""
import csv
import datetime
import glob
import json
import os
import re
import statistics
import sys

KERNEL_BOUND_S = 30e-6  # shorter bench times are left out of the PyTorch comparison
LAYOUT_PASS = {"nt": "fwd", "nn": "dgrad", "tn": "wgrad"}  # how kernels_ref.py names the layouts


def load(path):
    with open(path) as f:
        return json.load(f)


def label_of(span_name):
    """`chunk 0 mb0 fwd/L0/attn.qkv fwd` -> `L0.attn.qkv fwd mb0`, as the bench labels its cases."""
    m = re.match(r"chunk \d+ (mb\d+) \w+/(.*) (fwd|bwd|wgrad)$", span_name)
    return f"{m.group(2).replace('/', '.')} {m.group(3)} {m.group(1)}" if m else None


def shape_key(event):
    args = event["args"]
    pass_name = event["name"].rsplit(" ", 1)[1]
    return (event["cat"], json.dumps(args.get("shape")), args.get("dtype"), args.get("memory_bytes"), pass_name)


def live_against_bench(record, run):
    """Rows (label, ops, live_us, bench_us) for every op shape the bench labelled; `run` is a scenario's name, or
    `<scenario>.repeat-<n>` for a repeat of its live run."""
    scenario = re.sub(r"\.repeat-\d+$", "", run)
    bench = {m["label"]: m for m in load(f"{record}/{scenario}.bench.json")["measurements"] if "label" in m}
    events = [e for e in load(f"{record}/{run}.measured.json")["traceEvents"] if e.get("ph") == "X"]
    by_shape = {}
    for e in events:
        by_shape.setdefault(shape_key(e), []).append(e)
    rows = []
    for e in events:
        label = label_of(e["name"])
        if label in bench and shape_key(e) in by_shape:
            same = by_shape.pop(shape_key(e))
            # busy_us: the time the op's kernels ran, where the host left gaps between them.
            live_us = statistics.median(x["args"].get("busy_us", x["dur"]) for x in same)
            rows.append((label, len(same), live_us, bench[label]["median_ns"] / 1e3))
    return rows, len(events)


def smi_rows(path, columns):
    """nvidia-smi's CSV samples, and each one's time (UTC, seconds since the epoch)."""
    with open(path) as f:
        rows = [r for r in csv.reader(f) if len(r) == columns and r[0][:1].isdigit()]
    utc = datetime.timezone.utc
    return rows, [datetime.datetime.strptime(r[0].strip(), "%Y/%m/%d %H:%M:%S.%f").replace(tzinfo=utc).timestamp()
                  for r in rows]


def bench_against_pytorch(record, name):
    """{check: [(shape, bench_s, pytorch_s)]} over the shapes both measured, for the bench files
    `name`.json and *.`name`.json."""
    reference = load(f"{record}/pytorch-kernels.json")
    grid = {(r["m"], r["n"], r["k"]): r["median_s"] for r in reference["gemm_grid_nn"]}
    layers = {(r["pass"], r["m"], r["n"], r["k"]): r["median_s"] for r in reference["gemm_layers"]}
    attention = {(r["heads"], r["seq"], r["head_dim"], bool(r["causal"])): (r["fwd_s"], r["bwd_s"])
                 for r in reference["attention"] if r["backend"] == "cudnn"}
    checks = {"GEMM, the suite's NN grid": [], "GEMM, the scenarios' layers (fwd nt, dgrad nn, wgrad tn)": [],
              "cuDNN attention forward": [], "cuDNN attention backward": []}
    files = [f"{record}/{name}.json"] + sorted(glob.glob(f"{record}/*.{name}.json"))
    for path in files:
        for m in load(path)["measurements"]:
            bench_s, s = m["median_ns"] * 1e-9, m["shape"]
            if bench_s < KERNEL_BOUND_S or m["dtype"] != "bf16":
                continue
            if m["op"] == "gemm" and "label" not in m and m.get("kernel") == "nn":
                key = (s["m"], s["n"], s["k"])
                if key in grid:
                    checks["GEMM, the suite's NN grid"].append((key, bench_s, grid[key]))
            elif m["op"] == "gemm" and "label" in m:
                key = (LAYOUT_PASS[m["kernel"]], s["m"], s["n"], s["k"])
                if key in layers:
                    checks["GEMM, the scenarios' layers (fwd nt, dgrad nn, wgrad tn)"].append((key, bench_s, layers[key]))
            elif m["op"] in ("attention_fwd", "attention_bwd") and s["batch"] == 1 and "kv_heads" not in s:
                key = (s["heads"], s["queries"], s["head_dim"], bool(s["causal"]))
                if key in attention:
                    forward = m["op"] == "attention_fwd"
                    name = "cuDNN attention forward" if forward else "cuDNN attention backward"
                    checks[name].append((key, bench_s, attention[key][0 if forward else 1]))
    return checks


def clock_phases(record):
    """(phase, samples, median SM MHz, median W, median utilisation %) per phase of phases.json."""
    rows, stamps = smi_rows(f"{record}/clocks.csv", 7)
    seconds = [t - stamps[0] for t in stamps]
    out = []
    for phase in load(f"{record}/phases.json")["phases"]:
        inside = [r for t, r in zip(seconds, rows) if phase["from_s"] <= t < phase["to_s"]]
        out.append((phase["name"], len(inside), statistics.median(int(r[1]) for r in inside),
                    statistics.median(float(r[3]) for r in inside), statistics.median(int(r[6]) for r in inside)))
    return out


def sustained(record):
    """(case, rate in the first window, rate over the last second, SM MHz, W, throttled) per case."""
    result = load(f"{record}/sustained.json")
    rows, stamps = smi_rows(f"{record}/sustained.csv", 6)
    seconds = [t - result["t0_unix"] for t in stamps]
    out = []
    for case in result["cases"]:
        # The last 2 s of the case: the clock has settled where the power limit holds it.
        settled = [r for t, r in zip(seconds, rows) if case["to_s"] - 2.0 <= t < case["to_s"]]
        last = [w["work_per_s"] for w in case["windows"] if w["t"] >= case["to_s"] - 1.0]
        # Held at the software power cap (throttle reason 0x4) in most of those samples.
        throttled = 2 * sum(1 for r in settled if int(r[4], 16) & 0x4) > len(settled)
        out.append((case["name"], case["windows"][0]["work_per_s"], statistics.mean(last),
                    statistics.median(int(r[1]) for r in settled), statistics.median(float(r[2]) for r in settled),
                    throttled))
    return out


def percent(x):
    return f"{100 * x:+.1f}%"


def spread(errors):
    """`median +2.9%, from -0.8% to +8.8%, 27 of 27 within 10%`."""
    return (f"median {percent(statistics.median(errors))}, from {percent(min(errors))} to {percent(max(errors))}, "
            f"{sum(abs(e) <= 0.10 for e in errors)} of {len(errors)} within 10%")


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    record = sys.argv[1].rstrip("/")
    print("weft live's span per op shape against weft bench's time for the same shape")
    for path in sorted(glob.glob(f"{record}/*.measured.json")):
        run = os.path.basename(path).removesuffix(".measured.json")
        rows, events = live_against_bench(record, run)
        errors = [live / bench - 1 for _, _, live, bench in rows]
        print(f"  {run}: {len(rows)} shapes ({sum(r[1] for r in rows)} of {events} ops), "
              f"live/bench - 1 {spread(errors)}")
    runs = [("bench", "weft bench"), ("bench-sustained", "weft bench --sample-ms 50")]
    for files, command in runs if os.path.exists(f"{record}/pytorch-kernels.json") else []:
        if not os.path.exists(f"{record}/{files}.json"):
            continue
        print()
        print(f"{command} against PyTorch on the same GPU (shapes of {KERNEL_BOUND_S * 1e6:.0f} us or more)")
        for name, pairs in bench_against_pytorch(record, files).items():
            if not pairs:
                continue  # a bench of the suite alone has no scenario layers
            errors = [bench / pytorch - 1 for _, bench, pytorch in pairs]
            print(f"  {name}: {len(pairs)} shapes, bench/PyTorch - 1 {spread(errors)}")
    print()
    print("SM clock and power while each step ran (nvidia-smi every 200 ms)")
    for name, samples, clock, watts, utilisation in clock_phases(record):
        print(f"  {name}: {clock:.0f} MHz, {watts:.0f} W, utilisation {utilisation:.0f}% (median of {samples})")
    if os.path.exists(f"{record}/sustained.json"):
        print()
        print("Each kernel class back to back for 4 s after 2 s idle (tools/gpu-sustained.py; the last 2 s)")
        for name, first, last, clock, watts, throttled in sustained(record):
            rate = "{:.2f} TB/s" if name.startswith(("add", "layernorm")) else "{:.0f} TFLOP/s"
            print(f"  {name}: {rate.format(first / 1e12)} -> {rate.format(last / 1e12)} ({percent(last / first - 1)}), "
                  f"{clock:.0f} MHz, {watts:.0f} W{', at the power limit' if throttled else ''}")
    if os.path.exists(f"{record}/flex-tiles.json"):
        print()
        print("\n".join(flex_attention(record)))


def flex_attention(record):
    """Lines on FlexAttention's tiles (flex-tiles*.json, one run each) and the profiler's per-call work
    (flex-profiler.json, else flex-tiles.json's own), all written by tools/flex-tiles.py."""
    lines = []
    for path in sorted(glob.glob(f"{record}/flex-tiles*.json")):
        run = load(path)
        t = run["tiles"]
        ms = t["ms"]
        lines.append(f"FlexAttention's forward on {run['device']} ({os.path.basename(path)}), 8 query heads on 1 "
                     f"key-value head, head size 128, {t['tokens']} tokens, the same {t['selected_tiles']} tiles of "
                     f"{t['tile']} x {t['tile']} under each mask (tools/flex-tiles.py)")
        for name in ms:
            lines.append(f"  {name}: {ms[name]:.3f} ms, {1e3 * ms[name] / t['selected_tiles']:.3f} us per tile, "
                         f"x{ms[name] / ms['full']:.2f} the full tiles'")
    tiles = load(f"{record}/flex-tiles.json")
    profiler = load(f"{record}/flex-profiler.json") if os.path.exists(f"{record}/flex-profiler.json") else tiles
    lines.append("Cornstarch's profiler, per call besides the kernel: a rank of 8's block mask from a dense mask "
                 "(create_block_mask), and the sequence's keys and values drawn (torch.randn)")
    for row in profiler["profiler"]:
        compiled = row.get("create_block_mask_compiled_ms")
        lines.append(f"  {row['tokens'] // 1024}K tokens: create_block_mask {row['create_block_mask_ms']:.2f} ms eager"
                     + (f", {compiled:.2f} ms compiled" if compiled is not None else "")
                     + f"; randn {row['randn_kv_ms']:.2f} ms")
    return lines


if __name__ == "__main__":
    main()
