"""GQA8 paged FP8-KV attention on the H200: netra's decode and split-sequence verification against
torch SDPA (every backend) on a BF16 copy of the cache and a Triton split-KV kernel that reads the
FP8 pools in place (bench/attention_triton.py), in one process.

netra's cubins are loaded through the CUDA driver (ctypes) and launched on torch's current stream,
so CUDA-graph capture records them like any torch kernel. Every timed shape is checked in the same
run against the contract's policy (FP64 reference of the dequantized math on the GPU, the bound of
contracts/attention/gqa8_paged.hpp) for netra and for each peer. The peers read a dense BF16 copy
of the gathered, dequantized K/V (exact: every E4M3 value is a BF16 value); making that copy is
timed separately ("dequant copy") and not included in their figures.

usage: python3 bench/attention.py --objects build/code_objects --out bench/results/attention_h200.json
"""
from __future__ import annotations

import argparse
import ctypes
import itertools
import json
import math
import os
import sys
import time

import torch

sys.path.insert(0, __file__.rsplit("/bench/", 1)[0])
from bench import attention_triton, common  # noqa: E402
from bench.attention_common import Gqa8Args as Args, bound, check, compare as compare_rows, launch_programmatic  # noqa: E402

HQ, HKV, D, BLOCK = 16, 2, 256, 64
FP8 = torch.float8_e4m3fn
cuda = ctypes.CDLL("libcuda.so.1")


class Instance:
    """One catalogued attention_gqa8 instance: attention-gqa8-sm90a-<phase>-<tq>-<page>-<bw>-<stages>-<maxb>-<cap>[-<split>]."""

    def __init__(self, objects: str, phase: int, tq: int, page: int, bw: int, stages: int, max_batch: int = 64, cap: int = 128,
                 programmatic: bool | None = None, split: int = 1, warpgroup: bool = False):
        self.name = f"attention-gqa8-sm90a-{phase}-{tq}-{page}-{bw}-{stages}-{max_batch}-{cap}" + (
            f"-{split}-1" if warpgroup else f"-{split}" if split > 1 else "")
        self.split = split  # BlockSplit: warps that share each block (the order is bw x stages')
        self.warpgroup = warpgroup  # WarpgroupMma: the products on the warpgroup matrix unit (4 waves a warpgroup)
        # attention_gqa8_stage_two::programmatic_dependent_launch (decode: Tq = 1); False for objects whose stage two
        # does not wait on the device (a baseline built before it did)
        self.programmatic = tq == 1 if programmatic is None else programmatic
        self.tq, self.bw, self.stages, self.cap = tq, bw, stages, cap
        tokens_per_wave = 2 if tq % 2 == 0 else 1  # attention_gqa8::tokens_per_wave
        waves = tq // tokens_per_wave * bw
        warpgroups = -(-waves // 4)  # attention_gqa8::warpgroups (4 waves each)
        self.threads = 128 * warpgroups if warpgroup else 32 * waves * split
        ring, epilogue = stages * bw * BLOCK * D, waves * 8 * tokens_per_wave * D * 4
        table = (2 * waves * split if stages == 0 else max(2, -(-stages // 2)) + 1) * (1 if stages == 0 else bw) * BLOCK * 8
        stats = waves * 8 * tokens_per_wave * 8
        if warpgroup:  # attention_gqa8::lds_bytes with WarpgroupMma: the ring, Q, two widened pieces (V's groups 1040 bytes apart)
            self.lds = ring + 8 * tq * D * 2 + 2 * (D // 8) * 1040 + table + stats
        else:  # the widened block: the verify's (sm90a) widen_once
            self.lds = max(ring, epilogue) + 8 * tq * D * 2 + table + stats + (bw * BLOCK * D * 2 if tq > 1 else 0)
        self.lds += waves * 8 * tokens_per_wave * (BLOCK + 8) * 4 if split > 1 and stages > 0 else 0  # the ring's score exchange
        self.per_sm = max(1, min((227 * 1024 + 1024) // (self.lds + 1024), 65536 // (256 * self.threads)))  # workgroups_per_processor (sm90a)
        rows = 8 * tq
        self.split_o_bytes = cap * HKV * rows * D * 4
        self.workspace = torch.zeros(self.split_o_bytes // 4 + cap * HKV * rows * 2, dtype=torch.float32, device="cuda")
        data = open(f"{objects}/{self.name}.cubin", "rb").read()
        self.module = ctypes.c_void_p()
        check(cuda.cuModuleLoadData(ctypes.byref(self.module), data), "cuModuleLoadData")
        self.one, self.two = ctypes.c_void_p(), ctypes.c_void_p()
        check(cuda.cuModuleGetFunction(ctypes.byref(self.one), self.module, b"netra_attention_gqa8_stage_one"), "stage one")
        check(cuda.cuModuleGetFunction(ctypes.byref(self.two), self.module, b"netra_attention_gqa8_stage_two"), "stage two")
        check(cuda.cuFuncSetAttribute(self.one, 8, self.lds), "max dynamic shared")  # CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES

    def slices_for(self, batch: int, processors: int) -> int:  # attention_gqa8::slices_for
        fill = max(1, processors // max(1, batch * HKV))
        want = min(fill * self.per_sm, max(fill, 32))
        return 1 if want == 1 else min(want, max(1, self.cap // batch))

    def launch(self, c: "Case", s: int, slices: int, stage_two: bool = True, programmatic: bool | None = None) -> None:
        a = Args(c.q[s].data_ptr(), c.out[s].data_ptr(), c.k[s].data_ptr(), c.v[s].data_ptr(), c.qo.data_ptr(), c.kv_indptr.data_ptr(),
                 c.kv_indices[s].data_ptr(), c.kv_indptr.data_ptr(), c.scales.data_ptr(), c.scales.data_ptr() + 4,
                 self.workspace.data_ptr(), self.workspace.data_ptr() + self.split_o_bytes, c.q_tokens, c.slots, c.kv_indices[s].numel(), slices)
        params = (ctypes.c_void_p * 1)(ctypes.cast(ctypes.pointer(a), ctypes.c_void_p))
        stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
        check(cuda.cuLaunchKernel(self.one, slices, HKV, c.batch, self.threads, 1, 1, self.lds, stream, params, None), "launch one")
        if slices > 1 and stage_two:
            if self.programmatic if programmatic is None else programmatic:
                launch_programmatic(self.two, (HKV * 8 * self.tq, c.batch, 1), D, stream, params)
            else:
                check(cuda.cuLaunchKernel(self.two, HKV * 8 * self.tq, c.batch, 1, D, 1, 1, 0, stream, params, None), "launch two")


class Case:
    """`sets` independent input sets (rotated past L2) of one call: B requests of lengths `lengths`."""

    def __init__(self, lengths: list[int], tq: int, sets: int, seed: int):
        g = torch.Generator(device="cuda").manual_seed(seed)
        self.batch, self.tq, self.lengths = len(lengths), tq, lengths
        total = sum(lengths)
        self.slots = total + 64
        self.q_tokens = self.batch * tq
        self.qo = torch.arange(self.batch + 1, device="cuda", dtype=torch.int64) * tq
        self.kv_indptr = torch.tensor([0] + list(itertools.accumulate(lengths)), device="cuda", dtype=torch.int32)
        self.scales = torch.tensor([0.9, 1.1], device="cuda", dtype=torch.float32)
        self.q, self.out, self.k, self.v, self.kv_indices = [], [], [], [], []
        for _ in range(sets):
            self.q.append(torch.randn(self.q_tokens, HQ, D, device="cuda", generator=g).to(torch.bfloat16))
            self.out.append(torch.empty(self.q_tokens, HQ, D, device="cuda", dtype=torch.bfloat16))
            self.k.append((torch.randn(self.slots, HKV, D, device="cuda", generator=g) * 1.5).to(FP8).view(torch.uint8))
            self.v.append((torch.randn(self.slots, HKV, D, device="cuda", generator=g) * 1.5).to(FP8).view(torch.uint8))
            self.kv_indices.append(torch.randperm(self.slots, device="cuda", generator=g)[:total].to(torch.int64))

    def bytes(self) -> int:  # compulsory: FP8 K and V once, the indices, Q and O
        return sum(self.lengths) * (2 * HKV * D + 8) + 2 * self.q_tokens * HQ * D * 2

    def dense(self, s: int) -> tuple[torch.Tensor, torch.Tensor]:
        """Gathered, dequantized BF16 K/V [B, 2, Lmax, 256] (zero-padded)."""
        lmax = max(self.lengths)
        k = torch.zeros(self.batch, HKV, lmax, D, device="cuda", dtype=torch.bfloat16)
        v = torch.zeros_like(k)
        self.dequant_into(s, k, v)
        return k, v

    def dequant_into(self, s: int, k: torch.Tensor, v: torch.Tensor) -> None:
        ks, vs = self.scales[0], self.scales[1]
        idx, start = self.kv_indices[s], 0
        for b, n in enumerate(self.lengths):
            rows = idx[start:start + n]
            k[b, :, :n] = (self.k[s][rows].view(FP8).to(torch.bfloat16) * ks).transpose(0, 1)
            v[b, :, :n] = (self.v[s][rows].view(FP8).to(torch.bfloat16) * vs).transpose(0, 1)
            start += n


def reference(c: Case, s: int, b: int) -> tuple[torch.Tensor, torch.Tensor]:
    """FP64 output of request b [tq, 16, 256] and the contract's bound."""
    start = int(sum(c.lengths[:b]))
    n = c.lengths[b]
    rows = c.kv_indices[s][start:start + n]
    k = c.k[s][rows].view(FP8).to(torch.float64)  # [n, 2, 256]
    v = c.v[s][rows].view(FP8).to(torch.float64) * float(c.scales[1])
    q = c.q[s][b * c.tq:(b + 1) * c.tq].to(torch.float64).view(c.tq, HKV, 8, D)
    scale = float(c.scales[0]) / 16
    dots = torch.einsum("thgd,nhd->thgn", q, k)
    absdots = torch.einsum("thgd,nhd->thgn", q.abs(), k.abs())
    t = torch.arange(c.tq, device="cuda").view(c.tq, 1, 1, 1)
    visible = torch.arange(n, device="cuda").view(1, 1, 1, n) < (n - c.tq + t + 1)
    s_ = (dots * scale).masked_fill(~visible, -math.inf)
    w = torch.softmax(s_, dim=-1)
    out = torch.einsum("thgn,nhd->thgd", w, v)
    vinf = v.abs().amax(0).view(1, HKV, 1, D)  # over all positions: >= the visible ones
    limit = bound(out, dots, absdots, scale, visible, vinf, n, 2.0 ** -24)
    return out.reshape(c.tq, HQ, D), limit.reshape(c.tq, HQ, D)


def compare(c: Case, got: torch.Tensor, s: int, requests: list[int]) -> dict:
    return compare_rows(lambda b: reference(c, s, b), got, c.tq, requests)


def sdpa_peers(c: Case, dense: list[tuple[torch.Tensor, torch.Tensor]], check_requests: list[int]) -> list[dict]:
    from torch.nn.attention import SDPBackend, sdpa_kernel
    from torch.nn.attention.bias import causal_lower_right
    peers = []
    lmax = max(c.lengths)
    ragged = min(c.lengths) != lmax
    pad = torch.arange(lmax, device="cuda").view(1, lmax) < torch.tensor(c.lengths, device="cuda").view(-1, 1)  # [B, L]
    for view in ("gqa", "folded"):
        for backend in (SDPBackend.CUDNN_ATTENTION, SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH):
            name = f"torch SDPA ({backend.name.lower()}, {'enable_gqa' if view == 'gqa' else 'GQA-folded view'}) on a BF16 copy"
            outs = [torch.empty_like(c.out[s]) for s in range(len(dense))]

            def make(s, view=view, backend=backend):
                k, v = dense[s]
                q = c.q[s].view(c.batch, c.tq, HQ, D)
                if view == "gqa":
                    qq = q.transpose(1, 2)  # [B, 16, tq, D]
                    if c.tq > 1 and not ragged:
                        mask = causal_lower_right(c.tq, lmax)
                    elif ragged or c.tq > 1:
                        t = torch.arange(c.tq, device="cuda").view(1, c.tq, 1)
                        lens = torch.tensor(c.lengths, device="cuda").view(-1, 1, 1)
                        mask = (torch.arange(lmax, device="cuda").view(1, 1, lmax) < lens - c.tq + t + 1).unsqueeze(1)
                    else:
                        mask = None

                    def call():
                        with sdpa_kernel(backend):
                            o = torch.nn.functional.scaled_dot_product_attention(qq, k, v, attn_mask=mask, scale=1 / 16, enable_gqa=True)
                        outs[s].view(c.batch, c.tq, HQ, D).copy_(o.transpose(1, 2))
                else:
                    qq = q.view(c.batch, c.tq, HKV, 8, D).permute(0, 2, 1, 3, 4).reshape(c.batch, HKV, c.tq * 8, D)
                    mask = None
                    if ragged or c.tq > 1:
                        t = (torch.arange(c.tq * 8, device="cuda") // 8).view(1, -1, 1)
                        lens = torch.tensor(c.lengths, device="cuda").view(-1, 1, 1)
                        mask = (torch.arange(lmax, device="cuda").view(1, 1, lmax) < lens - c.tq + t + 1).unsqueeze(1)

                    def call():
                        with sdpa_kernel(backend):
                            o = torch.nn.functional.scaled_dot_product_attention(qq, k, v, attn_mask=mask, scale=1 / 16)
                        outs[s].view(c.batch, c.tq, HKV, 8, D).copy_(o.view(c.batch, HKV, c.tq, 8, D).permute(0, 2, 1, 3, 4))
                return call

            peers.append(common.checked_peer(name, make, len(dense), lambda: compare(c, outs[0], 0, check_requests),
                                             "K/V dequantized to a BF16 copy beforehand (copy not timed here)"))
            torch.cuda.synchronize()
    return peers


def triton_peer(c: Case, check_requests: list[int]) -> dict:
    """bench/attention_triton.py on the call's own FP8 pools and input sets (no copy)."""
    configs = attention_triton.configurations(HQ, HKV, D, c.tq, 1 / 16, False, c.batch, torch.cuda.get_device_properties(0).multi_processor_count)
    return attention_triton.checked_peer(
        configs, len(c.q), c.out[0],
        lambda cfg, s, out: lambda: cfg(c.q[s], c.k[s].view(FP8), c.v[s].view(FP8), c.qo, c.kv_indptr, c.kv_indices[s], c.scales, out),
        lambda out: compare(c, out, 0, check_requests))


def dequant_copy_us(c: Case, dense: list) -> float:
    calls = [lambda s=s: c.dequant_into(s, *dense[s]) for s in range(len(dense))]
    return common.bench_graph(calls, reps=10)["median_us"]


def bench_shape(inst: Instance, lengths: list[int], tq: int, contract: str, target_us, seed: int, bw: float, peers_on: bool = True,
                floor_us: float | None = None, slices: int | None = None) -> dict:
    probe = Case(lengths, tq, 1, seed)
    sets = min(common.rotation(probe.bytes()), 64)
    del probe
    c = Case(lengths, tq, sets, seed)
    if slices is None:
        slices = inst.slices_for(c.batch, torch.cuda.get_device_properties(0).multi_processor_count)
    calls = [lambda s=s: inst.launch(c, s, slices) for s in range(sets)]
    for x in c.out:
        x.fill_(float("nan"))
    calls[0]()
    torch.cuda.synchronize()
    check_requests = sorted({0, c.batch - 1})
    cmp = compare(c, c.out[0], 0, check_requests)
    calls[0]()
    again = c.out[0].clone()
    calls[0]()
    repeatable = bool(torch.equal(again.view(torch.int16), c.out[0].view(torch.int16)))
    g = common.bench_graph(calls, reps=15)
    e = common.bench_eager(calls, reps=15)
    one_us = plain_us = None  # stage one alone (split calls): where the time goes between the stages
    if slices > 1:
        one_us = common.bench_graph([lambda s=s: inst.launch(c, s, slices, stage_two=False) for s in range(sets)], reps=15)["median_us"]
        if inst.programmatic:  # the same call with stage two launched plainly (its device wait then a no-op)
            plain_us = common.bench_graph([lambda s=s: inst.launch(c, s, slices, programmatic=False) for s in range(sets)], reps=15)["median_us"]
    peers, copy_us = [], None
    if peers_on:
        nd = min(sets, 2)
        dense = [c.dense(s) for s in range(nd)]
        copy_us = dequant_copy_us(c, dense)
        peers = sdpa_peers(c, dense, check_requests)
        del dense
        peers.append(triton_peer(c, check_requests))
    shape = {"batch": c.batch, "kv_len": max(lengths) if tq == 1 else max(lengths) - tq, "tq": tq}
    if min(lengths) != max(lengths):
        shape["kv_len_mean"] = sum(lengths) / len(lengths)
        shape["mixed"] = True
    rec = common.record(contract, inst.name, shape, g["median_us"], e["median_us"], correct=cmp["beyond_bound"] == 0 and repeatable,
                        comparison="bounded (contracts/attention/gqa8_paged.hpp): |err| <= 2^-8 |ref| + V_inf (rho + (L/4 + 256) 2^-24 + 2^-20) "
                                   "against the FP64 dequantized math, requests " + str(check_requests),
                        peers=peers, bytes_moved=c.bytes(), copy_bandwidth=bw, target_us=target_us, floor_us=floor_us,
                        slices=slices, input_sets=sets, repeatable_bits=repeatable, dequant_copy_graph_us=copy_us,
                        stage_one_graph_us=one_us, stage_two_programmatic=bool(slices > 1 and inst.programmatic),
                        plain_stage_two_launch_graph_us=plain_us, **cmp)
    print(f"{inst.name} {shape} slices {slices}: graph {g['median_us']:.2f} us eager {e['median_us']:.2f} stage one {one_us} plain {plain_us} "
          f"| roofline {rec['roofline_us']:.2f} "
          f"| {cmp} | best peer {rec['best_peer']} {rec['best_peer_graph_us']} | copy {copy_us}", flush=True)
    del c
    torch.cuda.empty_cache()
    return rec


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--objects", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--budget-s", type=float, default=130.0, help="start no new shape after this many seconds")
    ap.add_argument("--floors", help="bench/attention_floor.py's evidence file: each shape's floor under netra's grid")
    ap.add_argument("--profile-verify", action="store_true", help="only launch the served verify at prefix 49152 four times (for ncu)")
    ap.add_argument("--served-only", action="store_true",
                    help="no slice sweep or mapping comparison: each batch gets the mapping dispatch serves (B 64: 8 x 0, B 1: 2 x 0 / 4, else 2 x 0)")
    ap.add_argument("--baseline-objects", help="cubins of an earlier revision (plain stage-two launch): the served B = 1 decode and "
                                               "verify timed against them in the same run (stage_two_baseline)")
    ap.add_argument("--baseline-revision", default="", help="the revision the baseline cubins were built from")
    ap.add_argument("--block-split", action="store_true",
                    help="only the BlockSplit comparison: at decode L 8192 and B 64 / 128 / 16 / 8 / 1, then B 1 at L 1024 / 32768, the "
                         "form dispatch serves (8 x 0 at B 64, 2 x 0 widened above, 2 x 0 / 4 at B 1, 2 x 0 else; with the peers at L 8192) "
                         "against 2 x 0 with each block over 8 (and 4) warps, the call and stage one alone "
                         "(block_split_comparison); nothing else")
    a = ap.parse_args()
    if a.profile_verify:
        inst, c = Instance(a.objects, 2, 12, 1, 1, 6, warpgroup=True), Case([49152 + 12], 12, 1, 5)
        slices = inst.slices_for(1, torch.cuda.get_device_properties(0).multi_processor_count)
        for _ in range(4):
            inst.launch(c, 0, slices)
        torch.cuda.synchronize()
        return
    began = time.monotonic()
    torch.zeros(1, device="cuda")
    bw = common.copy_bandwidth()
    # The Stages 0 mappings and the fastest ring one (4 x 3); the other rings (2 x 2, 1 x 2, 2 x 6,
    # 1 x 8) measured 1.5-6x slower at every batch (the results of d8b5ff4, docs/kernels/attention.md).
    candidates = [Instance(a.objects, 0, 1, 1, bw_, st, cap=cap) for bw_, st, cap in ((2, 0, 512), (4, 0, 256), (1, 0, 512), (4, 3, 128))]
    direct_8 = Instance(a.objects, 0, 1, 1, 8, 0, cap=512)  # 8 waves: one block a wave at B = 1 with 16 slices (L = 8192)
    wide = Instance(a.objects, 0, 1, 1, 2, 0, max_batch=128, cap=512)  # contracts/attention/gqa8_decode_wide.hpp: batches 65..128
    verify = Instance(a.objects, 2, 12, 1, 1, 6, warpgroup=True)  # served (sm90a): two tokens per wave, 6 stages, products on two warpgroups
    # 2 x 0 with each block over 4 / 8 warps (BlockSplit): 4 served at B = 1 (tactics::attention_gqa8_block_split_max_batch)
    split_4, split_8 = (Instance(a.objects, 0, 1, 1, 2, 0, cap=512, split=n) for n in (4, 8))
    records, mapping, sweep, baseline, split_cmp = [], [], [], [], []
    method = ("CUDA graph replay and eager bursts of calls over input sets rotated past L2 (>= 3x L2), median of 15 (peers 10); "
              "torch SDPA peers read a dense BF16 copy of the gathered, dequantized cache, timed separately (dequant_copy_graph_us); the Triton peer "
              "(bench/attention_triton.py) reads the FP8 pools in place, the fastest of its configurations (slices, BLOCK_N, warps) timed over "
              "the rotated sets; "
              "verification first (stage_one_graph_us: stage one alone, split calls), then slice counts other than slices_for's "
              "(slice_sweep), then every sm90a decode mapping timed on B in {1, 64, 8} x L = 8192 (mapping_comparison), and each "
              "decode record is the mapping that was fastest at its batch")

    def save() -> None:
        common.write_family(a.out, "attention", records, bw, method=method, mapping_comparison=mapping, slice_sweep=sweep,
                            stage_two_baseline=baseline, **({"block_split_comparison": split_cmp} if a.block_split else {}),
                            floors_under_netra_grids=[{"shape": k[0], "mapping": k[1], "stream_graph_us": v} for k, v in floors.items()])

    floors = {}
    if a.floors and os.path.exists(a.floors):
        for f in json.load(open(a.floors))["records"]:
            if f["mode"] == "stream" and f["mapping"] != "alternative":
                floors[(f["shape"], f["mapping"])] = f["graph_us"]

    def keep_mapping(r: dict) -> None:
        mapping.append({k: r[k] for k in ("instance", "shape", "netra_graph_us", "netra_eager_us", "correct", "slices")})

    def measure(lengths, tq, contract, target, floor_key, seed, inst) -> None:
        # the floor program's names of netra's grids (a BlockSplit decode grid is "decode 2x0/4")
        label = f"{'verify' if tq > 1 else 'decode'} {inst.bw}x{inst.stages}" + (f"/{inst.split}" if inst.split > 1 and tq == 1 else "")
        records.append(bench_shape(inst, lengths, tq, contract, target, seed, bw, floor_us=floors.get((floor_key, label))))
        save()

    if a.block_split:  # the same shapes and seeds on each form, one process; the floors of these grids under floors_under_netra_grids
        # The step's decode batches first (L = 8192; B 64 takes one slice of 2 x 0 / 8: 512 threads x (1, 2, 64)), then
        # B = 1 at other lengths. Each shape's first form is the one dispatch serves (with the peers where the shape is the
        # step's), then its BlockSplit forms.
        plan = [([8192] * 64, 101, [direct_8, split_8]), ([8192] * 128, 103, [wide]),
                ([8192] * 16, 104, [candidates[0], split_8, split_4]), ([8192] * 8, 102, [candidates[0], split_8, split_4]),
                ([8192], 100, [split_4, candidates[0], split_8]), ([1024], 106, [split_4, candidates[0], split_8]),
                ([32768], 107, [split_4, candidates[0], split_8])]
        for lengths, seed, forms in plan:
            for served_form, inst in zip([True] + [False] * (len(forms) - 1), forms):
                if time.monotonic() - began > a.budget_s:
                    break
                label = f"decode {inst.bw}x{inst.stages}" + (f"/{inst.split}" if inst.split > 1 else "")
                r = bench_shape(inst, lengths, 1, "gqa8_decode", {1: 6.0, 64: 140.0}.get(len(lengths)) if lengths[0] == 8192 else None, seed, bw,
                                peers_on=served_form and lengths[0] == 8192, floor_us=floors.get((f"decode B={len(lengths)} L={lengths[0]}", label)))
                r["served"] = served_form
                records.append(r)
                split_cmp.append({"block_split": inst.split, "served": served_form,
                                  **{k: r[k] for k in ("instance", "shape", "netra_graph_us", "netra_eager_us", "stage_one_graph_us",
                                                       "correct", "slices", "best_peer", "best_peer_graph_us", "floor_us")}})
                save()
        return
    if a.baseline_objects:  # first: the same shapes and seeds on the earlier revision's cubins, then on this revision's
        old = {"decode": Instance(a.baseline_objects, 0, 1, 1, 2, 0, cap=512, programmatic=False),
               "verify": Instance(a.baseline_objects, 2, 12, 1, 1, 8, programmatic=False)}
        for lengths, tq, seed in (([8192], 1, 100), ([1024], 1, 106), ([8192] * 8, 1, 102), ([49152 + 12], 12, 102), ([8192 + 12], 12, 105)):
            for which, inst in (("baseline", old["verify" if tq > 1 else "decode"]), ("this revision", verify if tq > 1 else candidates[0])):
                r = bench_shape(inst, lengths, tq, "split_verify_gqa8" if tq > 1 else "gqa8_decode", None, seed, bw, peers_on=False)
                baseline.append({"revision": a.baseline_revision if which == "baseline" else "this revision",
                                 **{k: r[k] for k in ("instance", "shape", "netra_graph_us", "stage_one_graph_us", "plain_stage_two_launch_graph_us",
                                                      "stage_two_programmatic", "correct", "slices")}})
                save()
    # Verification first (the served two-token verify), then the slice counts around slices_for's
    # (verify; decode B = 1, where each mapping's chunk rounding bounds the useful slices).
    measure([49152 + 12], 12, "split_verify_gqa8", 20.0, "verify Tq=12 L=49152", 102, verify)
    measure([8192 + 12], 12, "split_verify_gqa8", None, "verify Tq=12 L=8192", 105, verify)
    # B = 1 first: the 8-wave mapping at the slice counts that give each wave one or two blocks
    # (16 / 8 at L = 8192), 4 x 0 and 2 x 0 at 32, then L = 1024, then verify at fewer slices.
    sweep_plan = [(direct_8, [8192], 1, n) for n in (16, 8)] + [(candidates[1], [8192], 1, 32), (candidates[0], [8192], 1, 32)]
    sweep_plan += [(direct_8, [1024], 1, 2), (candidates[1], [1024], 1, 4), (candidates[0], [1024], 1, 8), (candidates[0], [1024], 1, 66)]
    sweep_plan += [(verify, [49152 + 12], 12, n) for n in (44,)]
    for inst, lengths, tq, n in [] if a.served_only else sweep_plan:
        if time.monotonic() - began > a.budget_s * 0.4:
            break
        r = bench_shape(inst, lengths, tq, "split_verify_gqa8" if tq > 1 else "gqa8_decode", None, 700 + n, bw, peers_on=False, slices=n)
        sweep.append({k: r[k] for k in ("instance", "shape", "netra_graph_us", "stage_one_graph_us", "correct", "slices")})
        save()

    best = {1: split_4, 64: direct_8, 8: candidates[0]} if a.served_only else {}  # batch -> the fastest correct mapping at L = 8192
    for b in () if a.served_only else (1, 64, 8):
        times = []
        for inst in candidates + [direct_8] + ([split_4] if b == 1 else []):
            if time.monotonic() - began > a.budget_s * 0.55:
                break
            r = bench_shape(inst, [8192] * b, 1, "gqa8_decode", None, 900 + b, bw, peers_on=False)
            keep_mapping(r)
            save()
            if r["correct"]:
                times.append((r["netra_graph_us"], inst))
        best[b] = min(times, key=lambda t: t[0])[1] if times else candidates[0]

    def decode_for(batch: int) -> Instance:
        if batch > 64:
            return wide
        return best[min(best, key=lambda k: abs(k - batch))]

    g = torch.Generator().manual_seed(7)
    mixed = [int(x) for x in torch.randint(256, 16384, (64,), generator=g)]
    plan = [([8192], 1, "gqa8_decode", 6.0, "decode B=1 L=8192"), ([8192] * 64, 1, "gqa8_decode", 140.0, "decode B=64 L=8192"),
            ([8192] * 8, 1, "gqa8_decode", None, "decode B=8 L=8192"), ([8192] * 128, 1, "gqa8_decode", None, "decode B=128 L=8192"),
            ([8192] * 16, 1, "gqa8_decode", None, "decode B=16 L=8192"), (mixed, 1, "gqa8_decode", None, None)]
    plan += [([L] * b, 1, "gqa8_decode", None, None) for b in (1, 16, 64) for L in (1024, 8192, 32768) if L != 8192]
    for i, (lengths, tq, contract, target, floor_key) in enumerate(plan):
        if time.monotonic() - began > a.budget_s:
            print(f"budget reached: {len(plan) - i} shapes not run", flush=True)
            break
        measure(lengths, tq, contract, target, floor_key, 100 + i, decode_for(len(lengths)))
    save()


if __name__ == "__main__":
    main()
