#!/usr/bin/env python3
"""Converts kernel measurements made with PyTorch (kernels_ref.py's output) into weft's measurement format.

Usage: tools/reference-measurements.py REFERENCE.json DEVICE OUT.json [BENCH.json ...]

REFERENCE.json is a file of ../shared/reference/measured/ or a GPU record's pytorch-kernels.json
(scenarios/measurements/live/; made by ../shared/gpu/kernels_ref.py on one GPU); DEVICE is the weft device
spec it was measured on (h100-sxm, h200); BENCH.json are `weft bench` files of
the same GPU, whose kernel gaps (the device's time between kernels queued back to back, which PyTorch's
timings cannot show) are pooled into the output's. Each measurement keeps its source
and a label; `weft calibrate OUT.json` then fits a profile (docs/calibration.md, bundled profiles).
What is converted:
  gemm_layers     GEMMs of layer shapes: forward X.W^T as kernel nt, dgrad dY.W as nn, wgrad dY^T.X as tn,
                  off the grid ("grid": false)
  gemm_grid_nn    the grid of A.B products (kernel nn)
  attention       SDPA per backend: flash -> flash2, cudnn, efficient; backward time = time(forward +
                  backward) - time(forward), as the reference defines it. The math backend is left out: PyTorch
                  2.11 computes it in fp32, not as the unfused 16-bit attention of Megatron-LM; the unfused
                  kernel's measurements come from the FlashAttention README's standard attention instead
                  (scenarios/measurements/published/flash-attention-readme.csv)
  memory          layernorm_fwd, rmsnorm_fwd, gelu_fwd, add, dropout over [tokens, hidden]; layernorm_bwd =
                  time(layernorm forward + backward) - time(forward); swiglu_fwd (chunk, SiLU and product:
                  weft's swiglu_unfused_fwd, width = half the input); fused AdamW over fp32 parameters
  info            the device-to-device copy, as the generic memory-bound op in bf16 and fp32
  host_issue      PyTorch eager's time to issue an op: the calls of the NN grid whose GEMM would take under a
                  fifth of the call at the best rate the grid reached, and that took at most twice the fastest call
                  (a slower one is its kernel's, not the host's), are bound by the host's dispatch, and their
                  times per call are its samples (docs/host-issue.md)
  kernel_gap      the BENCH.json files' kernel_gap samples, pooled (docs/host-issue.md)
A memory-bound row that took longer than a row of the same op moving at least twice its bytes is left
out (listed in the file's notes): its time says more about the measurement than about the kernel.
"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from measurement_files import FIGURES_SOURCE, measurement, standard_attention, write_measurement_file  # noqa: E402

FIGURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scenarios", "measurements", "published",
                       "flash-attention-readme.csv")

GEMM_LAYOUT = {"fwd": "nt", "dgrad": "nn", "wgrad": "tn"}
ATTENTION_KERNEL = {"flash": "flash2", "cudnn": "cudnn", "efficient": "efficient"}
ROW_KERNELS = {"layernorm_fwd": ("norm", "layernorm_fwd"), "rmsnorm_fwd": ("norm", "rmsnorm_fwd"),
               "gelu_fwd": ("elementwise", "gelu_fwd"), "add": ("elementwise", "add"),
               "dropout_fwd": ("elementwise", "dropout")}


def gemms(ref):
    out = []
    for r in section_rows(ref, "gemm_layers"):
        label = f"{r['model']} tp{r['tp']} {r['tokens']} tokens {r['layer']} {r['pass']}"
        out.append(measurement("gemm", "bf16", {"m": r["m"], "n": r["n"], "k": r["k"]}, r["median_s"], label,
                               "reference", GEMM_LAYOUT[r["pass"]], grid=False))
    for r in section_rows(ref, "gemm_grid_nn"):
        out.append(measurement("gemm", "bf16", {"m": r["m"], "n": r["n"], "k": r["k"]}, r["median_s"],
                               "grid A.B", "reference", "nn"))
    return out


def attention(ref):
    out = []
    for r in section_rows(ref, "attention"):
        if "error" in r or r["backend"] not in ATTENTION_KERNEL:
            continue
        shape = {"batch": 1, "heads": r["heads"], "queries": r["seq"], "keys": r["seq"], "head_dim": r["head_dim"],
                 "causal": r["causal"]}
        label = f"sdpa {r['backend']} {r['heads']} heads x {r['seq']} x {r['head_dim']}"
        kernel = ATTENTION_KERNEL[r["backend"]]
        out.append(measurement("attention_fwd", "bf16", shape, r["fwd_s"], label, "reference", kernel))
        out.append(measurement("attention_bwd", "bf16", shape, r["bwd_s"], label, "reference", kernel))
    return out


def implausible(rows):
    """Rows slower than a row of the same op that moves at least twice the bytes."""
    bad = []
    for r in rows:
        for other in rows:
            if other["op"] == r["op"] and other["bytes"] >= 2 * r["bytes"] and other["seconds"] < r["seconds"]:
                bad.append((r, other))
                break
    return bad


def memory(ref, notes):
    rows = []
    fwd = {(r["op"], r["hidden"], r["tokens"]): r["median_s"] for r in section_rows(ref, "memory") if "hidden" in r}
    for r in section_rows(ref, "memory"):
        if r["op"] in ROW_KERNELS:
            rows.append({"op": r["op"], "tokens": r["tokens"], "width": r["hidden"], "seconds": r["median_s"],
                         "bytes": r["bytes_in"]})
        elif r["op"] == "layernorm_fwd_bwd":
            rows.append({"op": "layernorm_bwd", "tokens": r["tokens"], "width": r["hidden"],
                         "seconds": r["median_s"] - fwd[("layernorm_fwd", r["hidden"], r["tokens"])],
                         "bytes": r["bytes_in"], "combined": r["median_s"]})
        elif r["op"] == "swiglu_fwd":
            rows.append({"op": r["op"], "tokens": r["tokens"], "width": r["hidden"] // 2, "seconds": r["median_s"],
                         "bytes": r["bytes_in"]})
    # The combined layernorm time is what was measured: judge its plausibility, not the difference's.
    judged = [dict(r, seconds=r.get("combined", r["seconds"])) for r in rows]
    left_out = set()
    for r, other in implausible(judged):
        left_out.add((r["op"], r["tokens"], r["width"]))
        notes.append(f"left out {r['op']} over {r['tokens']} x {r['width']}: {r['seconds'] * 1e6:.1f} us, more than "
                     f"{other['seconds'] * 1e6:.1f} us over {other['tokens']} x {other['width']} "
                     f"({other['bytes'] / r['bytes']:.0f}x the bytes)")
    out = []
    for r in rows:
        if (r["op"], r["tokens"], r["width"]) in left_out:
            continue
        op, kernel = ROW_KERNELS.get(r["op"], ("norm", "layernorm_bwd") if r["op"] == "layernorm_bwd"
                                     else ("elementwise", "swiglu_unfused_fwd"))
        label = f"{r['op']} {r['tokens']} x {r['width']}"
        out.append(measurement(op, "bf16", {"rows": r["tokens"], "width": r["width"]}, r["seconds"], label,
                               "reference", kernel))
    for r in section_rows(ref, "memory"):
        if r["op"] == "adamw_fused_fp32":
            out.append(measurement("optimizer", "fp32", {"parameters": r["params"]}, r["median_s"],
                                   f"torch.optim.AdamW(fused=True) over {r['params']} fp32 parameters", "reference",
                                   "adamw_fused"))
    return out


def copies(ref):
    """The 1 GiB device-to-device copy: the generic memory-bound op (as many elements read as written)."""
    seconds = 2 * 2**30 / (ref["info"]["copy_GBps_rw"] * 1e9)
    out = []
    for dtype, size in (("bf16", 2), ("fp32", 4)):
        elements = 2**30 // size
        out.append(measurement("elementwise", dtype, {"inputs": elements, "outputs": elements}, seconds,
                               "device-to-device copy of 1 GiB", "reference"))
    return out


def host_issue(ref):
    """The per-call times of the grid's GEMMs that the host's dispatch bounds, as the host's issue time."""
    rows = section_rows(ref, "gemm_grid_nn")
    flops = {id(r): 2 * r["m"] * r["n"] * r["k"] for r in rows}
    best = max(flops[id(r)] / r["median_s"] for r in rows)
    fastest = min(r["median_s"] for r in rows)
    bound = sorted(r["median_s"] * 1e9 for r in rows
                   if flops[id(r)] / best < r["median_s"] / 5 and r["median_s"] <= 2 * fastest)
    return {"samples_ns": [round(ns, 1) for ns in bound], "source": "reference",
            "label": f"torch.matmul calls of the NN grid that the host bounds ({len(bound)} shapes whose GEMM at the "
                     f"grid's best rate, {best / 1e12:.0f} TFLOP/s, takes under a fifth of the call, which took at "
                     f"most twice the fastest call)"}


def kernel_gap(bench_paths):
    """The kernel gap samples of weft bench files, pooled."""
    samples = []
    for path in bench_paths:
        with open(path) as f:
            bench = json.load(f)
        if "kernel_gap" not in bench:
            sys.exit(f"reference-measurements: {path} has no kernel_gap (weft bench --backend cuda with CUPTI writes one)")
        samples += bench["kernel_gap"]["samples_ns"]
    folders = sorted({os.path.dirname(p) for p in bench_paths})
    return {"samples_ns": samples, "source": "weft-bench",
            "label": f"weft bench's kernels queued back to back behind a busy GEMM, {len(bench_paths)} runs "
                     f"({len(samples)} samples) in {', '.join(folders)}"}


# GPUs without unfused attention figures of their own in the FlashAttention README, and the GPU whose they take.
UNFUSED_FIGURES_OF = {"h200": "h100-sxm"}


def section_rows(ref, section):
    """A section's rows: the shared reference files keep them under "rows" beside an "about"; kernels_ref.py's own
    output is the list itself."""
    return ref[section]["rows"] if isinstance(ref[section], dict) else ref[section]


def reference_source(path):
    """The reference file as the repository names it: its path in the repository where it is kept there (a GPU
    record, scenarios/measurements/live/), else the shared reference folder's."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    relative = os.path.relpath(os.path.abspath(path), root)
    return relative if not relative.startswith("..") else f"shared/reference/measured/{os.path.basename(path)}"


def main():
    if len(sys.argv) < 4 or sys.argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        sys.exit(0 if len(sys.argv) > 1 and sys.argv[1] in ("-h", "--help") else 2)
    reference_path, device, out_path = sys.argv[1:4]
    bench_paths = sys.argv[4:]
    with open(reference_path) as f:
        ref = json.load(f)
    notes = [ref["what"], "measured " + ref["measured"], "method: " + ref["method"]]
    figures_gpu = UNFUSED_FIGURES_OF.get(device, device)
    measurements = (gemms(ref) + attention(ref) + standard_attention(FIGURES, figures_gpu, "figures") + memory(ref, notes) +
                    copies(ref))
    left_out = len(notes) - 3
    if figures_gpu != device:
        notes.append(f"unfused attention: the FlashAttention README has no {device} figures; they are the "
                     f"{figures_gpu}'s, the same GPU die at the same clocks (its softmax, memory-bound, would run "
                     "faster in the larger GPU's memory)")
    info = ref["info"]
    out = {
        "format": "weft-measurements", "version": 2, "backend": "cuda", "device": device,
        "device_memory_bytes": info["mem_bytes"],
        "libraries": {"device": info["device"], "pytorch": info["torch"], "cuda": info["cuda"],
                      "cudnn": str(info["cudnn"])},
        "timestamp": ref["measured"][:10], "ranks": 1,
        "sources": {"reference": f"{reference_source(reference_path)} (made by shared/gpu/kernels_ref.py)",
                    "figures": FIGURES_SOURCE},
        "notes": notes,
        "measurements": measurements,
        "host_issue": host_issue(ref),
    }
    if bench_paths:
        out["sources"]["weft-bench"] = "weft bench --backend cuda on the same GPU model (the files named in the label)"
        out["kernel_gap"] = kernel_gap(bench_paths)
    write_measurement_file(out_path, out)
    print(f"{out_path}: {len(measurements)} measurements ({left_out} rows left out)")


if __name__ == "__main__":
    main()
