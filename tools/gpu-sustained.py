#!/usr/bin/env python3
"""Measures how single kernel classes run on one GPU when each runs back to back for seconds.

Usage (on a GPU machine with PyTorch; docs/calibration.md): python3 tools/gpu-sustained.py OUT.json

Each case (large and layer-shaped bf16 GEMMs on random and on zero operands, cuDNN attention
forward and backward, a memory-bound add and a LayerNorm) is warmed up, the GPU left idle for
2 s, then the case runs back to back for 4 s. OUT.json gets each case's time window and its
throughput in windows of about 0.25 s (FLOP/s for compute, bytes/s for memory-bound cases);
OUT.json.csv gets nvidia-smi's SM clock, power, temperature, throttle reasons and utilisation
every 100 ms, on the same clock (tools/gpu-record.py joins the two). A kernel timed in short
bursts with the GPU idle between them runs at the full clock; run for seconds, a GPU at its power
limit lowers its clock, by how much depending on the kernel and on its operands' bits.
"""
import json
import subprocess
import sys
import time

import torch
import torch.nn.functional as F

SETTLE_S = 2.0
RUN_S = 4.0
WINDOW_S = 0.25
BF16 = torch.bfloat16


def gemm(m, n, k, zeros=False):
    make = torch.zeros if zeros else torch.randn
    a, b = make(m, k, dtype=BF16, device="cuda"), make(k, n, dtype=BF16, device="cuda")
    return (lambda: a @ b), 2.0 * m * n * k


def attention(batch, heads, sequence, head_dim):
    q, k, v = (torch.randn(batch, heads, sequence, head_dim, dtype=BF16, device="cuda", requires_grad=True)
               for _ in range(3))
    output_gradient = torch.randn(batch, heads, sequence, head_dim, dtype=BF16, device="cuda")

    def step():
        with torch.nn.attention.sdpa_kernel(torch.nn.attention.SDPBackend.CUDNN_ATTENTION):
            out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        out.backward(output_gradient)
    # Causal: half the forward's 4 s^2 d h FLOPs; the backward 2.5 times the forward.
    return step, 3.5 * 4 * batch * heads * sequence * sequence * head_dim / 2


def add(elements):
    x, y = (torch.randn(elements, dtype=BF16, device="cuda") for _ in range(2))
    z = torch.empty_like(x)
    return (lambda: torch.add(x, y, out=z)), 3 * 2 * elements  # bytes read and written


def layernorm(tokens, hidden):
    x = torch.randn(tokens, hidden, dtype=BF16, device="cuda")
    weight, bias = torch.ones(hidden, dtype=BF16, device="cuda"), torch.zeros(hidden, dtype=BF16, device="cuda")
    return (lambda: F.layer_norm(x, (hidden,), weight, bias)), 2 * 2 * tokens * hidden


CASES = [
    ("gemm 8192^3 random", lambda: gemm(8192, 8192, 8192)),
    ("gemm 8192^3 zeros", lambda: gemm(8192, 8192, 8192, zeros=True)),
    ("gemm 4096x8192x2048 random (GPT-3 1.3B fc1)", lambda: gemm(4096, 8192, 2048)),
    ("cudnn attention fwd+bwd 2x16x2048x128 causal", lambda: attention(2, 16, 2048, 128)),
    ("add bf16 2^28 elements", lambda: add(1 << 28)),
    ("layernorm fwd 16384x8192", lambda: layernorm(16384, 8192)),
]


def run(name, case, t0):
    step, work = case()
    for _ in range(3):
        step()
    torch.cuda.synchronize()
    time.sleep(SETTLE_S)
    start = window_start = time.time()
    windows, calls = [], 0
    while time.time() - start < RUN_S:
        for _ in range(20):
            step()
        calls += 20
        torch.cuda.synchronize()
        now = time.time()
        if now - window_start >= WINDOW_S:
            rate = calls / (now - window_start)
            windows.append({"t": round(now - t0, 3), "calls_per_s": rate, "work_per_s": work * rate})
            calls, window_start = 0, now
    return {"name": name, "from_s": round(start - t0, 3), "to_s": round(time.time() - t0, 3), "work_per_call": work,
            "windows": windows}


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    with open(out + ".csv", "w") as trace:
        smi = subprocess.Popen(["nvidia-smi", "--query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,"
                                "clocks_event_reasons.active,utilization.gpu", "--format=csv,nounits", "-lms", "100"],
                               stdout=trace)
        torch.manual_seed(0)
        result = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "t0_unix": time.time()}
        result["cases"] = [run(name, case, result["t0_unix"]) for name, case in CASES]
        time.sleep(0.5)
        smi.terminate()
    with open(out, "w") as f:
        json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
