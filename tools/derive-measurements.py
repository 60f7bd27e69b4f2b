#!/usr/bin/env python3
"""Derives the measurement file of a GPU weft has no kernel measurements of from a measured one.

Usage: tools/derive-measurements.py MEASURED.json DEVICE OUT.json

MEASURED.json is a weft measurement file (scenarios/measurements/h100-sxm.json); DEVICE one of the GPUs
below. Each measurement's time is scaled by the ratio of what the two GPUs reach on that kind of kernel,
from the public figures cited per GPU: GEMMs by their maximum achievable matmul rates, memory-bound
kernels by their memory bandwidths, attention by a published ratio of the two GPUs' rates for that
kernel family (or the GEMM ratio where none is published), or the GPU's own published figures where
there are some (unfused attention on the A100). The file's notes say which; `weft calibrate
OUT.json` then makes the GPU's bundled profile. A derived file is an estimate: shapes keep the measured
GPU's efficiency curve, and times the measured GPU's host dispatch bound (calls under about 15 us on
the H100) are scaled as if they were kernel time, overstating tiny kernels on a slower GPU.
"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from measurement_files import FIGURES_SOURCE, standard_attention, write_measurement_file  # noqa: E402

FIGURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scenarios", "measurements", "published",
                       "flash-attention-readme.csv")

MAMF_SOURCE = ("stas00/ml-engineering compute/accelerator/README.md at 744d01e18b79512572f64a6bbd8b5f4a725203a7, "
               "Maximum Achievable Matmul FLOPS table: A100 SXM bf16 271.2 TFLOP/s (1024x10240x5120), "
               "H100 SXM 794.5 (note: H200 the same)")
FA2_SOURCE = ("Dao-AILab/flash-attention README figures flash2_a100_fwd_bwd_benchmark.png and "
              "flash2_h100_fwd_bwd_benchmark.png (commit 4f285b354796fb17df8636485b9a04df3ebbb7dc), values read off "
              "the bars: A100 / H100 forward+backward TFLOP/s, median over head size 64 and 128, causal or not, "
              "512-16K tokens: FlashAttention-2 0.60 (0.59-0.61 per panel)")

# Per GPU: (description, GEMM time ratio, memory-bound time ratio, attention time ratio per kernel, notes).
A100_ATTENTION = {"flash2": 1 / 0.60, "efficient": 1 / 0.60, "cudnn": 794.5 / 271.2}


def a100(bandwidth_gbps, memory_note):
    """An A100 SXM of `bandwidth_gbps` datasheet HBM bandwidth: the ratios above, its own unfused attention figures
    (measured on the A100 80GB)."""
    return dict(gemm=794.5 / 271.2, memory=3350 / bandwidth_gbps, attention=A100_ATTENTION, unfused="a100-sxm-80gb",
                notes=[MAMF_SOURCE, FA2_SOURCE,
                       "unfused attention: the A100 80GB's standard attention figures (FlashAttention README)",
                       f"memory-bound kernels: the datasheet bandwidths, {bandwidth_gbps:,} GB/s against 3,350 GB/s (H100 "
                       f"SXM), as the same fraction of the peak ({memory_note})",
                       "efficient (memory-efficient) attention, a kernel of the A100's generation, takes "
                       "FlashAttention-2's ratio; cuDNN attention, tuned for the H100 as FlashAttention-3 is, the GEMM "
                       "ratio"])


# The A40 trains in TF32 (fp32 storage on its TF32 tensor cores) in the dissertation's evaluations (papers/002), and
# in bf16 in Cornstarch's context-parallel one (papers/004 §6.5): its GEMMs at the best rates measured on an A40 in
# square matmuls, as ml-engineering's maximum achievable matmul figures are the best over shapes.
A40_TF32_TFLOPS = 59.52
A40_BF16_TFLOPS = 122.29
A40_SOURCE = ("NVIDIA A40 datasheet: TF32 Tensor 74.8 TFLOP/s dense, BF16 Tensor 149.7, GDDR6 696 GB/s "
              "(scenarios/clusters/devices/a40.json); achievable matmul rates measured on an A40 (zzc0721/"
              "torch-performance-test-data issue 185, 2026-07-22, PyTorch 2.11 with CUDA 12.8, the repository's "
              "test.py: square matmuls of 1,024 to 10,240, CUDA events around 30 calls after 10 warm-up calls), the "
              f"best over sizes: {A40_TF32_TFLOPS} TFLOP/s in TF32 (8,192) and {A40_BF16_TFLOPS} in bf16 (10,240), "
              "80% and 82% of the peaks (the same repository's database.md lists an RTX A6000, the same GA102, at "
              "123.34 in bf16, and an H100 SXM at 783.66 and 797.51, ml-engineering's 794.5), against the H100's "
              "794.5 in bf16, on the same shapes")
A40_MEMORY = ("memory-bound kernels: the datasheet bandwidths, 696 GB/s against 3,350 GB/s (H100 SXM), as the same "
              "fraction of the peak; in TF32 on fp32 tensors of the same shapes: twice the bytes, twice the time")
A40_UNFUSED = ("unfused attention: the A100 80GB's standard attention figures (FlashAttention README), which that README "
               "shows bound by memory traffic (softmax, dropout and masking), scaled by the bandwidths (2,039 GB/s "
               "against 696), and in TF32 by fp32's twice the bytes")
A40_FUSED = ("fused attention in bf16: FlashAttention-2 and memory-efficient attention at the A100's rate (FlashAttention's "
             "A100/H100 ratio above) times the bf16 peaks' ratio (149.7 / 312), cuDNN attention at the GEMM ratio; in "
             "TF32 none (FlashAttention and cuDNN take 16-bit inputs only, and no fp32 figure of the memory-efficient "
             "kernel was found)")
A40_TF32 = ("in TF32 every 16-bit measurement becomes a tf32 one: GEMMs on TF32 tensor cores, fp32 elementwise and "
            "normalisation kernels")


def a40():
    """The A40 in TF32 and in bf16: the H100's bf16 GEMM times by the achievable rates, its memory-bound kernels by the
    datasheet bandwidths (on fp32 tensors, twice the bytes, in TF32), unfused attention from the A100 80GB's
    standard-attention figures as a memory-bound kernel; fused attention in bf16 only (it takes 16-bit inputs)."""
    fused = {"flash2": 312 / 149.7 / 0.60, "efficient": 312 / 149.7 / 0.60, "cudnn": 794.5 / A40_BF16_TFLOPS}
    return [dict(gemm=794.5 / A40_TF32_TFLOPS, memory=3350 / 696, attention={}, unfused="a100-sxm-80gb",
                 unfused_scale=2 * 2039 / 696, dtype="tf32",
                 notes=[MAMF_SOURCE, FA2_SOURCE, A40_SOURCE, A40_MEMORY, A40_UNFUSED, A40_FUSED, A40_TF32]),
            dict(gemm=794.5 / A40_BF16_TFLOPS, memory=3350 / 696, attention=fused, unfused="a100-sxm-80gb",
                 unfused_scale=2039 / 696, only_16_bit=True, notes=[])]


# Per GPU: GEMM time ratio, memory-bound time ratio, attention time ratio per kernel, unfused attention figures
# of its own, notes; for a GPU measured in another dtype, the dtype and the scale of its unfused figures.
DERIVED = {
    "a40": a40(),
    "a100-sxm-80gb": a100(2039, "no public A100 copy measurement was found"),
    "a100-sxm-40gb": a100(1555, "no public A100 copy measurement was found; the attention figures are the 80GB's"),
    "h800": dict(
        gemm=1.0, memory=1.0, attention={},
        notes=["the H800 SXM is the H100 SXM's GPU and HBM3 with NVLink limited to 400 GB/s "
               "(shared/reference/README.md): its kernels take the H100's times"]),
}

MEMORY_OPS = {"elementwise", "norm", "optimizer"}


def ratio(m, spec):
    if m["op"] == "gemm":
        return spec["gemm"]
    if m["op"] in MEMORY_OPS:
        return spec["memory"]
    if m["op"] in ("attention_fwd", "attention_bwd"):
        return spec["attention"].get(m.get("kernel", "any"), spec["gemm"])
    raise SystemExit(f"cannot derive a {m['op']} measurement")


def derived_measurements(measured, spec, out):
    """`measured`'s measurements scaled by `spec`; the GPU's own unfused attention figures first where it has some."""
    derived_list = []
    own_unfused = spec.get("unfused")
    dtype = spec.get("dtype")
    if own_unfused:
        out["sources"]["figures"] = FIGURES_SOURCE
        for m in standard_attention(FIGURES, own_unfused, "figures"):
            if dtype:
                m["dtype"] = dtype
            if "unfused_scale" in spec:
                m["samples_ns"] = [round(t * spec["unfused_scale"], 1) for t in m["samples_ns"]]
            derived_list.append(m)
    for m in measured["measurements"]:
        if own_unfused and m.get("kernel") == "unfused":
            continue
        if dtype and m["op"] in ("attention_fwd", "attention_bwd"):
            continue  # the fused kernels take 16-bit inputs only
        if spec.get("only_16_bit") and m["dtype"] not in ("bf16", "fp16"):
            continue  # the fp32 kernels (the optimizer's) are the other variant's
        derived = {k: v for k, v in m.items() if k not in ("median_ns", "min_ns", "max_ns", "spread")}
        scale = ratio(m, spec)
        if dtype and m["dtype"] in ("bf16", "fp16"):
            derived["dtype"] = dtype
            if m["op"] in MEMORY_OPS:
                scale *= 2  # fp32 tensors of the same shape: twice the bytes
        derived["samples_ns"] = [round(t * scale, 1) for t in m["samples_ns"]]
        if m.get("source") == "reference":
            derived["source"] = "derived"
        derived_list.append(derived)
    return derived_list


def main():
    if len(sys.argv) != 4 or sys.argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        print("GPUs: " + ", ".join(DERIVED))
        sys.exit(0 if len(sys.argv) > 1 and sys.argv[1] in ("-h", "--help") else 2)
    measured_path, device, out_path = sys.argv[1:]
    if device not in DERIVED:
        sys.exit(f"derive-measurements: unknown GPU '{device}' (known: {', '.join(DERIVED)})")
    spec = DERIVED[device]
    notes = sum((v["notes"] for v in spec), []) if isinstance(spec, list) else spec["notes"]
    with open(measured_path) as f:
        measured = json.load(f)
    out = dict(measured)
    out["device"] = device
    out.pop("device_memory_bytes", None)
    out["sources"] = dict(measured.get("sources", {}))
    out["sources"]["derived"] = (f"derived from {measured_path} (measured on {measured['device']}) by "
                                 "tools/derive-measurements.py; see notes")
    out["notes"] = [f"every time is {measured['device']}'s, scaled to the {device}"] + notes
    if "host_issue" in measured:
        out["notes"].append(f"host_issue: {measured['device']}'s, kept unscaled: it is the time the host and its framework "
                            "take to issue an op, not the GPU's (docs/host-issue.md)")
    if "kernel_gap" in measured:
        out["notes"].append(f"kernel_gap: {measured['device']}'s, kept unscaled: no measurement of this GPU's gap between "
                            "kernels queued back to back, and no spec ratio it follows (docs/host-issue.md)")
    out["measurements"] = []
    for variant in spec if isinstance(spec, list) else [spec]:
        out["measurements"] += derived_measurements(measured, variant, out)
    write_measurement_file(out_path, out)
    print(f"{out_path}: {len(out['measurements'])} measurements derived from {measured_path}")


if __name__ == "__main__":
    main()
