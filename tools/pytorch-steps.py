#!/usr/bin/env python3
"""Times real PyTorch training steps on one GPU, as torchtitan runs them, and where their time goes.

Usage (on a GPU machine with PyTorch; docs/live.md):
  python3 tools/pytorch-steps.py OUT_DIR [CASE ...]

Each case is a decoder (Llama's layers as torchtitan writes them, or MPT's as llm-foundry's
modeling_mpt.py does) built in fp32 on the GPU and wrapped the way torchtitan wraps it: FSDP2's
fully_shard per block and on the root, parameters gathered in bf16 and gradients reduced in fp32
(MixedPrecisionPolicy), here over a process group of one rank. A step is the forward pass, the
loss (F.cross_entropy on fp32 logits), the backward pass, torch.nn.utils.clip_grad_norm_ (foreach)
and a fused AdamW step (one case runs without FSDP2, its fp32 parameters under autocast). After 3 warm-up steps, 10 steps are timed one by one on the host's clock
with the device synchronised after each; the peak memory the caching allocator held over them, and
nvidia-smi's SM clock and power every 100 ms, are kept beside. Then 2 more steps run under
torch.profiler: per step, every kernel, memory copy and set on the device, the time the device was
busy (the union of their intervals), the time it idled, and the host's operator calls.

OUT_DIR gets pytorch-steps.json (every case's figures) and each case's profiler trace, gzipped.
The weft scenarios of the same runs are scenarios/experiments/pytorch-*-1xh200.json.
"""
import gc
import gzip
import json
import os
import re
import subprocess
import sys
import time

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

WARMUP, TIMED, PROFILED = 3, 10, 2
BF16 = torch.bfloat16

# name: model family and shapes, layers kept, batch, sequence, full activation checkpointing.
CASES = {
    "llama3-8b-4l": dict(family="llama", hidden=4096, ffn=14336, heads=32, kv_heads=8, vocab=128256,
                         layers=4, batch=1, seq=8192, rope_theta=500000.0, checkpointing=False),
    "llama3-8b-4l-full-ac": dict(family="llama", hidden=4096, ffn=14336, heads=32, kv_heads=8, vocab=128256,
                                 layers=4, batch=1, seq=8192, rope_theta=500000.0, checkpointing=True),
    "llama2-13b-4l": dict(family="llama", hidden=5120, ffn=13824, heads=40, kv_heads=40, vocab=32000,
                          layers=4, batch=2, seq=4096, rope_theta=10000.0, checkpointing=False),
    "mpt-1b": dict(family="mpt", hidden=2048, ffn=8192, heads=16, vocab=50368, layers=24, batch=12, seq=2048,
                   checkpointing=False),
    "mpt-7b-8l": dict(family="mpt", hidden=4096, ffn=16384, heads=32, vocab=50368, layers=8, batch=6, seq=2048,
                      checkpointing=False),
    # The first case again without FSDP2 (fp32 parameters under autocast): what FSDP2 adds on one rank.
    "llama3-8b-4l-no-fsdp": dict(family="llama", hidden=4096, ffn=14336, heads=32, kv_heads=8, vocab=128256,
                                 layers=4, batch=1, seq=8192, rope_theta=500000.0, checkpointing=False,
                                 fsdp=False),
}


def rope_frequencies(head_dim, positions, theta):
    """torchtitan's precompute_freqs_cis: one complex rotation per position and pair of dimensions."""
    inverse = 1.0 / (theta ** (torch.arange(0, head_dim, 2, device="cuda")[: head_dim // 2].float() / head_dim))
    angles = torch.outer(torch.arange(positions, device="cuda", dtype=torch.float32), inverse)
    return torch.polar(torch.ones_like(angles), angles)


def apply_rope(q, k, frequencies):
    """torchtitan's apply_rotary_emb on (batch, sequence, heads, head_dim) tensors, in fp32 complex."""
    def rotate(x):
        pairs = torch.view_as_complex(x.float().reshape(*x.shape[:-1], -1, 2))
        rotated = pairs * frequencies.view(1, pairs.shape[1], 1, pairs.shape[-1])
        return torch.view_as_real(rotated).flatten(3).type_as(x)
    return rotate(q), rotate(k)


class LlamaBlock(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.heads, self.kv_heads, self.head_dim = c["heads"], c["kv_heads"], c["hidden"] // c["heads"]
        self.checkpointing = c["checkpointing"]
        self.attention_norm = nn.RMSNorm(c["hidden"], eps=1e-5)
        self.wq = nn.Linear(c["hidden"], self.heads * self.head_dim, bias=False)
        self.wk = nn.Linear(c["hidden"], self.kv_heads * self.head_dim, bias=False)
        self.wv = nn.Linear(c["hidden"], self.kv_heads * self.head_dim, bias=False)
        self.wo = nn.Linear(self.heads * self.head_dim, c["hidden"], bias=False)
        self.ffn_norm = nn.RMSNorm(c["hidden"], eps=1e-5)
        self.w1 = nn.Linear(c["hidden"], c["ffn"], bias=False)
        self.w2 = nn.Linear(c["ffn"], c["hidden"], bias=False)
        self.w3 = nn.Linear(c["hidden"], c["ffn"], bias=False)

    def attention(self, x, frequencies):
        b, s, _ = x.shape
        q = self.wq(x).view(b, s, self.heads, self.head_dim)
        k = self.wk(x).view(b, s, self.kv_heads, self.head_dim)
        v = self.wv(x).view(b, s, self.kv_heads, self.head_dim)
        q, k = apply_rope(q, k, frequencies)
        repeats = self.heads // self.kv_heads
        if repeats > 1:  # torchtitan's repeat_kv
            k = k[:, :, :, None, :].expand(b, s, self.kv_heads, repeats, self.head_dim).reshape(b, s, self.heads, -1)
            v = v[:, :, :, None, :].expand(b, s, self.kv_heads, repeats, self.head_dim).reshape(b, s, self.heads, -1)
        out = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True)
        return self.wo(out.transpose(1, 2).contiguous().view(b, s, -1))

    def body(self, x, frequencies):
        h = x + self.attention(self.attention_norm(x), frequencies)
        y = self.ffn_norm(h)
        return h + self.w2(F.silu(self.w1(y)) * self.w3(y))

    def forward(self, x, frequencies):
        if self.checkpointing:
            return checkpoint(self.body, x, frequencies, use_reentrant=False)
        return self.body(x, frequencies)


class Llama(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.tok_embeddings = nn.Embedding(c["vocab"], c["hidden"])
        self.layers = nn.ModuleList(LlamaBlock(c) for _ in range(c["layers"]))
        self.norm = nn.RMSNorm(c["hidden"], eps=1e-5)
        self.output = nn.Linear(c["hidden"], c["vocab"], bias=False)
        self.frequencies = rope_frequencies(c["hidden"] // c["heads"], c["seq"], c["rope_theta"])

    def forward(self, tokens):
        h = self.tok_embeddings(tokens)
        for layer in self.layers:
            h = layer(h, self.frequencies)
        return self.output(self.norm(h))


class MptBlock(nn.Module):
    """modeling_mpt.py's MPTBlock with llm-foundry's MPT defaults: no biases, LayerNorm, GeLU MLP."""

    def __init__(self, c):
        super().__init__()
        self.heads, self.head_dim = c["heads"], c["hidden"] // c["heads"]
        self.checkpointing = c["checkpointing"]
        self.norm_1 = nn.LayerNorm(c["hidden"], bias=False)
        self.Wqkv = nn.Linear(c["hidden"], 3 * c["hidden"], bias=False)
        self.out_proj = nn.Linear(c["hidden"], c["hidden"], bias=False)
        self.norm_2 = nn.LayerNorm(c["hidden"], bias=False)
        self.up_proj = nn.Linear(c["hidden"], c["ffn"], bias=False)
        self.down_proj = nn.Linear(c["ffn"], c["hidden"], bias=False)

    def body(self, x):
        b, s, _ = x.shape
        q, k, v = self.Wqkv(self.norm_1(x)).view(b, s, 3, self.heads, self.head_dim).unbind(2)
        out = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True)
        h = x + self.out_proj(out.transpose(1, 2).contiguous().view(b, s, -1))
        return h + self.down_proj(F.gelu(self.up_proj(self.norm_2(h))))

    def forward(self, x):
        return checkpoint(self.body, x, use_reentrant=False) if self.checkpointing else self.body(x)


class Mpt(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.wte = nn.Embedding(c["vocab"], c["hidden"])
        self.wpe = nn.Embedding(c["seq"], c["hidden"])
        self.layers = nn.ModuleList(MptBlock(c) for _ in range(c["layers"]))
        self.norm_f = nn.LayerNorm(c["hidden"], bias=False)

    def forward(self, tokens):
        h = self.wte(tokens) + self.wpe(torch.arange(tokens.shape[1], device=tokens.device))
        for layer in self.layers:
            h = layer(h)
        return F.linear(self.norm_f(h), self.wte.weight)  # tied embeddings


def start_process_group():
    """A process group of one rank for FSDP2; None where NCCL or FSDP2 cannot start."""
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29533")
    try:
        dist.init_process_group("nccl", rank=0, world_size=1, device_id=torch.device("cuda", 0))
        return True
    except Exception as error:  # recorded: the cases then run without FSDP
        print(f"no process group ({error}); running with autocast instead of FSDP2", flush=True)
        return False


def build(c, fsdp):
    """The case's model and optimizer, wrapped as torchtitan wraps them; and how it was wrapped."""
    with torch.device("cuda"):
        model = (Llama if c["family"] == "llama" else Mpt)(c)
    if fsdp:
        from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
        policy = MixedPrecisionPolicy(param_dtype=BF16, reduce_dtype=torch.float32)
        for index, layer in enumerate(model.layers):
            # torchtitan keeps the last block gathered after its forward: its backward comes next.
            fully_shard(layer, mp_policy=policy, reshard_after_forward=index < len(model.layers) - 1)
        fully_shard(model, mp_policy=policy)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.1, fused=True)
    return model, optimizer, "fsdp2" if fsdp else "autocast"


def make_step(model, optimizer, c, wrapping):
    tokens = torch.randint(0, c["vocab"], (c["batch"], c["seq"]), device="cuda")
    labels = torch.randint(0, c["vocab"], (c["batch"], c["seq"]), device="cuda")

    def step():
        with torch.autocast("cuda", dtype=BF16, enabled=wrapping == "autocast"):
            logits = model(tokens)
        loss = F.cross_entropy(logits.flatten(0, 1).float(), labels.flatten())
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0, foreach=True)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
    return step


def classify(name):
    """A device event's class, by its kernel's name (attention before GEMM: cuDNN's names say sm90)."""
    lowered = name.lower()
    for label, pattern in (("nccl", r"nccl"), ("attention", r"sdpa|fmha|flash|attention|cudnn"),
                           ("gemm", r"nvjet|gemm|cutlass|xmma|cublas|sm90_|sm80_"),
                           ("optimizer", r"multi_tensor|adam"), ("norm", r"norm"),
                           ("loss", r"softmax|nll|cross_entropy"), ("memcpy", r"^memcpy|^memset"),
                           ("copy", r"copy|cat|split|chunk|fill")):
        if re.search(pattern, lowered):
            return label
    return "other"


def union_us(intervals):
    total, end = 0.0, None
    for start, stop in sorted(intervals):
        if end is None or start > end:
            total += stop - start
            end = stop
        elif stop > end:
            total += stop - end
            end = stop
    return total


def profiled_steps(step, trace_path):
    """Per profiled step: the device's events and busy time within the step's host range."""
    from torch.profiler import ProfilerActivity, profile, record_function
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for index in range(PROFILED):
            with record_function(f"weft_step_{index}"):
                step()
                torch.cuda.synchronize()
    raw = trace_path + ".json"
    prof.export_chrome_trace(raw)
    with open(raw) as f:
        events = json.load(f)["traceEvents"]
    with open(raw, "rb") as f, gzip.open(trace_path + ".json.gz", "wb") as out:
        out.write(f.read())
    os.remove(raw)
    device = [e for e in events if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
    host_ops = [e for e in events if e.get("ph") == "X" and e.get("cat") == "cpu_op"]
    steps = []
    for index in range(PROFILED):
        marks = [e for e in events if e.get("name") == f"weft_step_{index}" and e.get("cat") == "user_annotation"]
        if not marks:
            continue
        begin, end = marks[0]["ts"], marks[0]["ts"] + marks[0]["dur"]
        inside = [e for e in device if begin <= e["ts"] <= end]
        if not inside:
            continue
        first, last = min(e["ts"] for e in inside), max(e["ts"] + e["dur"] for e in inside)
        busy = union_us([(e["ts"], e["ts"] + e["dur"]) for e in inside])
        classes, kernels = {}, {}
        for e in inside:
            label = classify(e["name"])
            entry = classes.setdefault(label, {"count": 0, "us": 0.0})
            entry["count"] += 1
            entry["us"] += e["dur"]
            kernel = kernels.setdefault(e["name"][:200], {"class": label, "count": 0, "us": 0.0})
            kernel["count"] += 1
            kernel["us"] += e["dur"]
        ordered = sorted(inside, key=lambda e: e["ts"])
        gaps = [b["ts"] - (a["ts"] + a["dur"]) for a, b in zip(ordered, ordered[1:])]
        steps.append({
            "host_range_us": end - begin, "device_span_us": last - first, "device_busy_us": busy,
            "device_events": len(inside), "gaps_over_5us": sum(1 for g in gaps if g > 5),
            "idle_in_gaps_over_5us": sum(g for g in gaps if g > 5),
            "host_operator_calls": sum(1 for e in host_ops if begin <= e["ts"] <= end),
            "classes": classes,
            "top_kernels": dict(sorted(kernels.items(), key=lambda kv: -kv[1]["us"])[:40]),
        })
    return steps


class ClockSampler:
    """nvidia-smi's SM clock and power every 100 ms while the timed steps run."""

    def __enter__(self):
        self.process = subprocess.Popen(
            ["nvidia-smi", "--query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_event_reasons.active,utilization.gpu",
             "--format=csv,noheader,nounits", "-lms", "100"], stdout=subprocess.PIPE, text=True)
        return self

    def __exit__(self, *_):
        self.process.terminate()
        self.samples = [line.split(", ") for line in self.process.communicate()[0].splitlines() if line.strip()]


def run_case(name, c, fsdp, out_dir):
    fsdp_error = None
    try:
        model, optimizer, wrapping = build(c, fsdp and c.get("fsdp", True))
        step = make_step(model, optimizer, c, wrapping)
        step()
    except Exception as error:  # recorded: the case then runs without FSDP2, so that the GPU time still measures
        print(f"{name}: FSDP2 failed ({error!r}); running with autocast instead", flush=True)
        fsdp_error = repr(error)
        model = optimizer = step = None
        gc.collect()
        torch.cuda.empty_cache()
        model, optimizer, wrapping = build(c, False)
        step = make_step(model, optimizer, c, wrapping)
        step()
    for _ in range(WARMUP - 1):
        step()
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    times = []
    with ClockSampler() as clocks:
        for _ in range(TIMED):
            start = time.perf_counter()
            step()
            torch.cuda.synchronize()
            times.append(1e3 * (time.perf_counter() - start))
    stats = torch.cuda.memory_stats()
    result = {
        "case": name, "config": c, "wrapping": wrapping, "fsdp_error": fsdp_error,
        "parameters": sum(p.numel() for p in model.parameters()),
        "step_ms": times, "median_step_ms": sorted(times)[len(times) // 2],
        "peak_allocated_bytes": stats["allocated_bytes.all.peak"],
        "peak_reserved_bytes": stats["reserved_bytes.all.peak"],
        "device_used_bytes_after": torch.cuda.mem_get_info()[1] - torch.cuda.mem_get_info()[0],
        "clock_samples": clocks.samples,
    }
    result["profiled_steps"] = profiled_steps(step, os.path.join(out_dir, f"{name}.trace"))
    del model, optimizer, step
    gc.collect()
    torch.cuda.empty_cache()
    return result


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    out_dir = sys.argv[1]
    names = sys.argv[2:] or list(CASES)
    os.makedirs(out_dir, exist_ok=True)
    torch.manual_seed(0)
    fsdp = start_process_group()
    record = {
        "device": torch.cuda.get_device_name(0), "torch": torch.__version__, "cuda": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version(), "nccl": str(torch.cuda.nccl.version()),
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "cases": [],
    }
    path = os.path.join(out_dir, "pytorch-steps.json")
    for name in names:
        began = time.perf_counter()
        try:
            record["cases"].append(run_case(name, CASES[name], fsdp, out_dir))
            last = record["cases"][-1]
            busy = [s["device_busy_us"] / 1e3 for s in last["profiled_steps"]]
            print(f"{name}: step {last['median_step_ms']:.1f} ms (median of {TIMED}), device busy {busy} ms, "
                  f"peak reserved {last['peak_reserved_bytes'] / 2**30:.2f} GiB "
                  f"({time.perf_counter() - began:.0f} s)", flush=True)
        except Exception as error:
            record["cases"].append({"case": name, "error": repr(error)})
            print(f"{name}: failed: {error!r}", flush=True)
            gc.collect()
            torch.cuda.empty_cache()
        with open(path, "w") as f:  # after every case: a later failure keeps what ran
            json.dump(record, f, indent=1)
    if fsdp:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
