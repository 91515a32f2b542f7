"""Probe: netra's served stage one beside the Triton peer's (bench/attention_triton.py) at the shapes where the
peer is faster, for ncu (`-k regex:stage_one`: each iteration launches netra's stage one, its stage two,
then the peer's two kernels) and for the peer's SASS (TRITON_CACHE_DIR). Not a benchmark.

usage: python3 lab/attention/triton_peer_profile.py extend|decode OBJECTS
  extend: GQA4 extend B 64, prefix 4096 (netra's 3-stage warpgroup form at its slices; the peer at 2 slices,
          BLOCK_N 64, 4 warps: the configuration bench/attention_extend.py chose)
  decode: GQA8 decode B 1, L 8192 (netra's 2 x 0 / 4 at 66 slices; the peer at 66 slices, BLOCK_N 64, 8 warps)
"""
from __future__ import annotations

import sys

import torch

sys.path.insert(0, __file__.rsplit("/lab/", 1)[0])
from bench import attention as gqa8, attention_extend as ax, attention_triton as at  # noqa: E402


def main() -> None:
    mode, objects = sys.argv[1], sys.argv[2]
    if mode == "extend":
        c = ax.Case(64, 4096, 1, 5)
        inst = ax.Warpgroup(objects, 3)
        slices = inst.slices_for(64, torch.cuda.get_device_properties(0).multi_processor_count)
        peer = at.PagedAttention(32, 8, 128, 12, ax.SCALE, True, 64, 2, 64, 4)
        out = torch.empty_like(c.out[0])
        run_peer = lambda: peer(c.q[0], c.k[0].view(ax.FP8), c.v[0].view(ax.FP8), c.qo, c.kv_indptr, c.kv_indices[0], c.scales, out,
                                c.k_ext[0], c.v_ext[0])
    else:
        c = gqa8.Case([8192], 1, 1, 5)
        inst = gqa8.Instance(objects, 0, 1, 1, 2, 0, cap=512, split=4)
        slices = 66
        peer = at.PagedAttention(16, 2, 256, 1, 1 / 16, False, 1, 66, 64, 8)
        out = torch.empty_like(c.out[0])
        run_peer = lambda: peer(c.q[0], c.k[0].view(gqa8.FP8), c.v[0].view(gqa8.FP8), c.qo, c.kv_indptr, c.kv_indices[0], c.scales, out)
    for _ in range(3):
        inst.launch(c, 0, slices)
        run_peer()
    torch.cuda.synchronize()
    same = float((out.float() - c.out[0].float()).abs().max())
    print(f"{mode}: netra {inst.name if hasattr(inst, 'name') else inst.NAME} at {slices} slices, peer {peer.describe()}; max |netra - peer| {same:.3g}")


if __name__ == "__main__":
    main()
