"""Shared by tools/reference-measurements.py and tools/derive-measurements.py: weft measurement entries."""
import csv
import json
import os


def measurement(op, dtype, shape, seconds, label, source, kernel=None, grid=True):
    """One entry of a weft measurement file (docs/calibration.md) timed at `seconds`."""
    m = {"op": op, "dtype": dtype}
    if kernel:
        m["kernel"] = kernel
    m["shape"] = shape
    if not grid:
        m["grid"] = False
    m["label"] = label
    m["source"] = source
    m["samples_ns"] = [round(seconds * 1e9, 1)]
    return m


FIGURES_SOURCE = ("scenarios/measurements/published/flash-attention-readme.csv: the FlashAttention README's forward + "
                  "backward figures (see the file's header); each time split between the passes in proportion to "
                  "their FLOPs (the backward 2.5 times the forward), as if both ran at the published rate")


def standard_attention(csv_path, device, source):
    """Unfused 16-bit attention of `device` from the FlashAttention README's figures ("standard": PyTorch's matmul,
    softmax, matmul): forward and backward measurements at the README's setup."""
    out = []
    with open(csv_path) as f:
        rows = csv.DictReader(line for line in f if not line.startswith("#"))
        for r in rows:
            if r["gpu"] != device or r["implementation"] != "standard":
                continue
            seq, head_dim, causal = int(r["seqlen"]), int(r["head_dim"]), r["causal"] == "1"
            batch, heads = 16384 // seq, 2048 // head_dim
            forward_flops = 4 * seq * seq * head_dim * heads * batch * (0.5 if causal else 1.0)
            total = 3.5 * forward_flops / (float(r["fwd_bwd_tflops"]) * 1e12)
            shape = {"batch": batch, "heads": heads, "queries": seq, "keys": seq, "head_dim": head_dim,
                     "causal": causal}
            label = f"standard attention {batch} x {heads} heads x {seq} x {head_dim} (FlashAttention README)"
            out.append(measurement("attention_fwd", "bf16", shape, total / 3.5, label, source, "unfused"))
            out.append(measurement("attention_bwd", "bf16", shape, total * 2.5 / 3.5, label, source, "unfused"))
    if not out:
        raise SystemExit(f"{csv_path}: no standard attention figures of {device}")
    return out


def write_measurement_file(path, contents):
    """Writes a measurement file whole or not at all (a temporary file renamed over it)."""
    with open(path + ".tmp", "w") as f:
        json.dump(contents, f, indent=1)
        f.write("\n")
    os.replace(path + ".tmp", path)
