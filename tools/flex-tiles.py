#!/usr/bin/env python3
"""Times FlexAttention's full and partial tiles, and the per-call work of Cornstarch's profiler, on one GPU.

Usage (on a GPU machine with PyTorch; docs/context-parallel.md): python3 tools/flex-tiles.py OUT.json [tiles,profiler]

One attention layer's forward as papers/004's Table 4 profiles it (8 query heads on 1 key-value head,
head size 128, bf16), over T = 16,384 tokens, with masks that select the same 128 x 128 tiles (those
on or below the diagonal of tiles), so that every difference is what a tile costs, not how many:
  full           every selected tile entirely unmasked (the mask is a function of the tile indices)
  partial        every selected tile half masked: within a tile, query row >= key column
  full_lookup    `full`, read element by element from a dense T x T boolean tensor, as the profiler
                 reads its masks
  partial_lookup `partial`, likewise
  partial_scattered  `partial_lookup` through a map that places the tiles' blocks in a random order, as the
                 profiler reads its mask under its random and LPT token distributions
and, for comparison, the causal mask (the same tiles, only the diagonal ones partial). Each is
compiled once (torch.compile of flex_attention), warmed up, and timed over 20 calls with CUDA events.
Then, per T of 16K, 32K and 64K, the profiler's work per timed call besides the kernel: building the
block mask of a rank's T/8 queries over the T keys from a dense boolean mask (create_block_mask, eager
and with its _compile option) and drawing the whole sequence's keys and values (torch.randn, 8 heads).
OUT.json gets each time in ms; the second argument picks the sections (default both).
"""
import json
import sys
import time

import torch
from torch.nn.attention.flex_attention import create_block_mask, flex_attention

HEADS, KV_HEADS, HEAD_DIM, TILE = 8, 1, 128, 128
TOKENS = 16384
CALLS = 20
BF16 = torch.bfloat16


def timed(call, calls=CALLS, warmup=3):
    """Mean ms per call over `calls` back-to-back calls, after `warmup` calls."""
    for _ in range(warmup):
        call()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(calls):
        call()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / calls


def tile_masks(tokens):
    """The mask functions, named as in the docstring; the dense tensors they read stay alive with them."""
    index = torch.arange(tokens, device="cuda")
    tile = index // TILE
    full_dense = tile[:, None] >= tile[None, :]
    partial_dense = full_dense & ((index % TILE)[:, None] >= (index % TILE)[None, :])

    def full(b, h, q, k):
        return q // TILE >= k // TILE

    def partial(b, h, q, k):
        return (q // TILE >= k // TILE) & (q % TILE >= k % TILE)

    def full_lookup(b, h, q, k):
        return full_dense[q, k]

    def partial_lookup(b, h, q, k):
        return partial_dense[q, k]

    def causal(b, h, q, k):
        return q >= k

    # `partial_lookup` through a position map that deals the tiles' blocks in a random order, as the
    # profiler reads its mask under the random and LPT distributions: the same tiles, read scattered.
    order = torch.randperm(tokens // TILE, device="cuda", generator=torch.Generator("cuda").manual_seed(0))
    position = order[tile] * TILE + index % TILE
    scattered_dense = torch.zeros_like(partial_dense)
    scattered_dense[position[:, None], position[None, :]] = partial_dense

    def partial_scattered(b, h, q, k):
        return scattered_dense[position[q], position[k]]

    return {"full": full, "partial": partial, "full_lookup": full_lookup, "partial_lookup": partial_lookup,
            "partial_scattered": partial_scattered, "causal": causal}


def tile_times(out):
    q = torch.randn(1, HEADS, TOKENS, HEAD_DIM, dtype=BF16, device="cuda")
    k = torch.randn(1, KV_HEADS, TOKENS, HEAD_DIM, dtype=BF16, device="cuda")
    v = torch.randn(1, KV_HEADS, TOKENS, HEAD_DIM, dtype=BF16, device="cuda")
    tiles = TOKENS // TILE
    out["tiles"] = {"tokens": TOKENS, "tile": TILE, "selected_tiles": tiles * (tiles + 1) // 2, "ms": {},
                    "compile_s": {}}
    attend = torch.compile(flex_attention)
    for name, mask in tile_masks(TOKENS).items():
        block_mask = create_block_mask(mask, None, None, TOKENS, TOKENS, device="cuda", BLOCK_SIZE=TILE)
        begin = time.time()
        attend(q, k, v, block_mask=block_mask, enable_gqa=True)
        torch.cuda.synchronize()
        out["tiles"]["compile_s"][name] = round(time.time() - begin, 2)
        out["tiles"]["ms"][name] = timed(lambda: attend(q, k, v, block_mask=block_mask, enable_gqa=True))
        print(name, out["tiles"]["ms"][name], "ms", flush=True)
        save(out)


def profiler_work(out):
    """The profiler's per-call work for a rank of 8: its T/8 queries' block mask over T keys, and T keys and values."""
    out["profiler"] = []
    for tokens in (16384, 32768, 65536):
        queries = tokens // 8
        dense = torch.rand(queries, tokens, device="cuda") < 0.5

        def lookup(b, h, q, k):
            return dense[q, k]

        def build(compiled):
            return timed(lambda: create_block_mask(lookup, None, None, queries, tokens, device="cuda",
                                                   BLOCK_SIZE=TILE, _compile=compiled), calls=3, warmup=1)

        draw = timed(lambda: (torch.randn(1, HEADS, tokens, HEAD_DIM, dtype=BF16, device="cuda"),
                              torch.randn(1, HEADS, tokens, HEAD_DIM, dtype=BF16, device="cuda")))
        row = {"tokens": tokens, "create_block_mask_ms": build(False), "create_block_mask_compiled_ms": build(True),
               "randn_kv_ms": draw}
        out["profiler"].append(row)
        print(row, flush=True)
        save(out)
        del dense


def save(out):
    with open(sys.argv[1], "w") as f:
        json.dump(out, f, indent=1)


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    torch.manual_seed(0)
    sections = sys.argv[2].split(",") if len(sys.argv) > 2 else ["tiles", "profiler"]
    out = {"device": torch.cuda.get_device_name(), "torch": torch.__version__}
    if "tiles" in sections:
        tile_times(out)
    if "profiler" in sections:
        profiler_work(out)


if __name__ == "__main__":
    main()
