"""GQA4 extend attention (contracts/attention/gqa4_extend.hpp) on the H200: netra's two plans (the pair
view's stage zero, GQA8 stage one and stage two; the native 48-row stage one and the same stage two,
with its floor: the native stage one without the math) against torch SDPA (every backend, the
enable_gqa and the GQA-folded views) on a BF16 copy of the prefix plus the extension and a Triton
split-KV kernel that reads the FP8 prefix in place (bench/attention_triton.py), in one process. The records join bench/results/attention_h200.json (merged by contract and shape: the
GQA8 records of bench/attention.py stay).

netra's cubin is loaded through the CUDA driver (ctypes) and launched on torch's current stream,
so graph capture records it like any torch kernel. Every timed shape is checked in the same run
against the contract's bound (FP64 reference of the dequantized math on the GPU) for netra and
for each peer. The peers read a dense BF16 copy of the gathered, dequantized prefix concatenated
with the extension (exact: every E4M3 value is a BF16 value); that copy is timed separately.

usage: python3 bench/attention_extend.py --objects build/code_objects --out bench/results/attention_h200.json
"""
from __future__ import annotations

import argparse
import ctypes
import itertools
import math
import sys
import time

import torch

sys.path.insert(0, __file__.rsplit("/bench/", 1)[0])
from bench import attention_triton, common  # noqa: E402
from bench.attention_common import Gqa8Args as View, bound, check, compare as compare_rows, launch_programmatic, shape_record  # noqa: E402

HQ, HKV, G, D, E = 32, 8, 4, 128, 12
SCALE = 0.0883883461356163  # fl32(1/sqrt(128))
FP8 = torch.float8_e4m3fn
cuda = ctypes.CDLL("libcuda.so.1")
NAME = "attention-gqa4-extend-sm90a-1-1-6-64-128"
MAX_BATCH, CAP = 64, 128
LDS = 150272  # pair_view::lds_bytes (the audit's figure)
Q_PAD, QO_PAD = MAX_BATCH * E * HQ * 256 * 2, 768
SPLIT_O, SPLIT_STATS = CAP * 4 * 96 * 256 * 4, CAP * 4 * 96 * 8


class Args(ctypes.Structure):  # kernels/attention/extend.hpp: attention_extend_args
    _fields_ = [("view", View)] + [(n, ctypes.c_void_p) for n in ("q", "out", "k_ext", "v_ext", "qo", "q_pad", "qo_pad")] + \
               [("q_tokens", ctypes.c_int64)]


WIDE_SLICES = 16  # kernels/attention/extend.hpp: attention_extend_stage_two::wide_slices (the launch path's choice)
# Stage two's forms (kernels/attention/extend.hpp: extend_stage_two_form<Lanes, Ahead>, Lanes x 128 threads): key, symbol, threads.
TWO_FORMS = {"two": 128, "two_wide": 512, "two_rows": 128, "two_wide_rows": 512}  # *_rows: RowScalars; two_rows served below 16 slices, two_wide from 16
TWO_SYMBOLS = tuple((k, f"netra_attention_extend_{k.replace('two', 'stage_two', 1)}".encode()) for k in TWO_FORMS)


class Instance:
    """The pair view's cubin: stage zero, the GQA8 stage one over the view, stage two (wide from 16 slices on)."""
    NAME = NAME
    SYMBOLS = (("zero", b"netra_attention_extend_stage_zero"), ("one", b"netra_attention_gqa8_stage_one")) + TWO_SYMBOLS
    STAGE_ONE_LDS = {"one": LDS}

    def __init__(self, objects: str):
        self.workspace = torch.zeros((Q_PAD + QO_PAD + SPLIT_O + SPLIT_STATS) // 4, dtype=torch.float32, device="cuda")
        self.module = ctypes.c_void_p()
        check(cuda.cuModuleLoadData(ctypes.byref(self.module), open(f"{objects}/{self.NAME}.cubin", "rb").read()), "cuModuleLoadData")
        self.f = {}
        for k, sym in self.SYMBOLS:
            self.f[k] = ctypes.c_void_p()
            check(cuda.cuModuleGetFunction(ctypes.byref(self.f[k]), self.module, sym), sym.decode())
        for k, lds in self.STAGE_ONE_LDS.items():
            check(cuda.cuFuncSetAttribute(self.f[k], 8, lds), "max dynamic shared")
            check(cuda.cuFuncSetAttribute(self.f[k], 9, 100), "shared carveout")

    @staticmethod
    def slices_for(batch: int, processors: int) -> int:  # attention_gqa4_extend::slices_for
        return min(max(2, processors // (batch * 4)), max(2, CAP // batch))

    def launch(self, c: "Case", s: int, slices: int) -> None:
        ws = self.workspace.data_ptr()
        view = View(ws, None, c.k[s].data_ptr(), c.v[s].data_ptr(), ws + Q_PAD, c.kv_indptr.data_ptr(), c.kv_indices[s].data_ptr(),
                    c.kv_indptr.data_ptr(), c.scales.data_ptr(), c.scales.data_ptr() + 4, ws + Q_PAD + QO_PAD, ws + Q_PAD + QO_PAD + SPLIT_O,
                    c.batch * E, c.slots, c.kv_indices[s].numel(), slices)
        a = Args(view, c.q[s].data_ptr(), c.out[s].data_ptr(), c.k_ext[s].data_ptr(), c.v_ext[s].data_ptr(), c.qo.data_ptr(), ws, ws + Q_PAD,
                 c.q_tokens)
        pa = (ctypes.c_void_p * 1)(ctypes.cast(ctypes.pointer(a), ctypes.c_void_p))
        pv = (ctypes.c_void_p * 1)(ctypes.cast(ctypes.pointer(a.view), ctypes.c_void_p))
        st = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
        check(cuda.cuLaunchKernel(self.f["zero"], E, c.batch, 1, 256, 1, 1, 0, st, pa, None), "launch zero")
        check(cuda.cuLaunchKernel(self.f["one"], slices, 4, c.batch, 384, 1, 1, LDS, st, pv, None), "launch one")
        self.stage_two(c, slices, st, pa)

    def stage_two(self, c: "Case", slices: int, st, pa, form: str | None = None, programmatic: bool = True) -> None:
        """Stage two in `form` (a TWO_FORMS key; None: the launch path's choice by slices), as the runtime records it: a
        programmatic dependent of stage one (`programmatic` False: a plain launch, its wait then a no-op)."""
        form = form or ("two_wide" if slices >= WIDE_SLICES else "two_rows")
        grid = (HKV, E, c.batch)
        if programmatic:
            launch_programmatic(self.f[form], grid, TWO_FORMS[form], st, pa)
        else:
            check(cuda.cuLaunchKernel(self.f[form], *grid, TWO_FORMS[form], 1, 1, 0, st, pa, None), "launch two")


class Native(Instance):
    """The native 48-row plan (contracts::attention_gqa4_extend_native): its stage one (or its floor: the
    same grid, copies, look-ups and workspace writes without the math) and the same stage two."""
    NAME = "attention-gqa4-extend-native-sm90a-1-6-64-128"
    LDS, THREADS = 6 * 64 * 128 + 4 * 64 * 8, 96  # attention_gqa4_extend_native::lds_bytes, workgroup_size
    SYMBOLS = (("one", b"netra_attention_extend_native_stage_one"), ("floor", b"netra_attention_extend_native_floor")) + TWO_SYMBOLS
    STAGE_ONE_LDS = {"one": LDS, "floor": LDS}

    @staticmethod
    def slices_for(batch: int, processors: int) -> int:  # attention_gqa4_extend_native::slices_for: one wave, 2 to 16
        return max(2, min(16, processors // (2 * batch), CAP // batch))

    def launch(self, c: "Case", s: int, slices: int, floor: bool = False, form: str | None = None, one: bool = True, two: bool = True,
               programmatic: bool = True) -> None:
        ws = self.workspace.data_ptr()
        view = View(c.q[s].data_ptr(), None, c.k[s].data_ptr(), c.v[s].data_ptr(), c.qo.data_ptr(), c.kv_indptr.data_ptr(),
                    c.kv_indices[s].data_ptr(), c.kv_indptr.data_ptr(), c.scales.data_ptr(), c.scales.data_ptr() + 4, ws + Q_PAD + QO_PAD,
                    ws + Q_PAD + QO_PAD + SPLIT_O, c.q_tokens, c.slots, c.kv_indices[s].numel(), slices)
        self.launch_view(c, s, slices, view, floor, form, one, two, programmatic)

    def launch_view(self, c: "Case", s: int, slices: int, view: View, floor: bool = False, form: str | None = None, one: bool = True,
                    two: bool = True, programmatic: bool = True) -> None:
        ws = self.workspace.data_ptr()
        a = Args(view, c.q[s].data_ptr(), c.out[s].data_ptr(), c.k_ext[s].data_ptr(), c.v_ext[s].data_ptr(), c.qo.data_ptr(), ws, ws + Q_PAD,
                 c.q_tokens)
        pa = (ctypes.c_void_p * 1)(ctypes.cast(ctypes.pointer(a), ctypes.c_void_p))
        st = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
        if one:
            check(cuda.cuLaunchKernel(self.f["floor" if floor else "one"], slices, HKV, c.batch, self.THREADS, 1, 1, self.LDS, st, pa, None),
                  "launch native one")
        if two:
            self.stage_two(c, slices, st, pa, form, programmatic)


class Warpgroup(Native):
    """The native plan with its products on the warpgroup matrix unit (attention_gqa4_extend_native's WarpgroupMma, one
    warpgroup of 128 threads, `stages` ring pieces, split capacity `cap`): the same symbols, bits and stage two."""
    THREADS = 128

    def __init__(self, objects: str, stages: int, cap: int = CAP):
        self.NAME = f"attention-gqa4-extend-native-sm90a-1-{stages}-64-{cap}-1"
        self.key, self.cap = f"Warpgroup{stages}-{cap}", cap
        # attention_gqa4_extend_native::lds_bytes: ring, Q (64 rows), two widened pieces, the slot table
        self.LDS = stages * 64 * 128 + 64 * 128 * 2 + 2 * 16 * 1040 + ((stages + 1) // 2 + 1) * 64 * 8
        self.per_sm = (227 * 1024 + 1024) // (self.LDS + 1024)  # workgroups_by_lds
        self.STAGE_ONE_LDS = {"one": self.LDS, "floor": self.LDS}
        super().__init__(objects)
        if cap != CAP:  # the workspace of this capacity's split state
            self.workspace = torch.zeros((Q_PAD + QO_PAD + cap * 4 * 96 * 256 * 4 + cap * 4 * 96 * 8) // 4, dtype=torch.float32, device="cuda")

    def slices_for(self, batch: int, processors: int) -> int:  # attention_gqa4_extend_native::slices_for (WarpgroupMma): the best-filled last wave
        slots, best, fill = processors * self.per_sm, 2, 0.0
        for s in range(2, max(2, min(16, self.cap // batch)) + 1):
            grid = batch * HKV * s
            f = grid / (-(-grid // slots) * slots)
            if f > fill:
                best, fill = s, f
        return best

    def launch(self, c: "Case", s: int, slices: int, **kw) -> None:
        split_o = Q_PAD + QO_PAD
        ws = self.workspace.data_ptr()
        view = View(c.q[s].data_ptr(), None, c.k[s].data_ptr(), c.v[s].data_ptr(), c.qo.data_ptr(), c.kv_indptr.data_ptr(),
                    c.kv_indices[s].data_ptr(), c.kv_indptr.data_ptr(), c.scales.data_ptr(), c.scales.data_ptr() + 4, ws + split_o,
                    ws + split_o + self.cap * 4 * 96 * 256 * 4, c.q_tokens, c.slots, c.kv_indices[s].numel(), slices)
        self.launch_view(c, s, slices, view, **kw)


def key_of(inst) -> str:
    return getattr(inst, "key", type(inst).__name__)


class Case:
    """`sets` input sets (rotated past L2): B requests of prefix P and 12 extension tokens each."""

    def __init__(self, batch: int, prefix: int, sets: int, seed: int):
        g = torch.Generator(device="cuda").manual_seed(seed)
        self.batch, self.prefix = batch, prefix
        total = batch * prefix
        self.slots, self.q_tokens = total + 64, batch * E
        self.qo = torch.arange(batch + 1, device="cuda", dtype=torch.int64) * E
        self.kv_indptr = torch.tensor(list(itertools.accumulate([0] + [prefix] * batch)), device="cuda", dtype=torch.int32)
        self.scales = torch.tensor([0.9, 1.1], device="cuda", dtype=torch.float32)
        self.q, self.out, self.k_ext, self.v_ext, self.k, self.v, self.kv_indices = [], [], [], [], [], [], []
        for _ in range(sets):
            self.q.append(torch.randn(self.q_tokens, HQ, D, device="cuda", generator=g).to(torch.bfloat16))
            self.out.append(torch.empty(self.q_tokens, HQ, D, device="cuda", dtype=torch.bfloat16))
            self.k_ext.append((torch.randn(self.q_tokens, HKV, D, device="cuda", generator=g) * 1.5).to(torch.bfloat16))
            self.v_ext.append((torch.randn(self.q_tokens, HKV, D, device="cuda", generator=g) * 1.5).to(torch.bfloat16))
            self.k.append((torch.randn(self.slots, HKV, D, device="cuda", generator=g) * 1.5).to(FP8).view(torch.uint8))
            self.v.append((torch.randn(self.slots, HKV, D, device="cuda", generator=g) * 1.5).to(FP8).view(torch.uint8))
            self.kv_indices.append(torch.randperm(self.slots, device="cuda", generator=g)[:total].to(torch.int64))

    def bytes(self) -> int:  # compulsory: FP8 prefix K and V once, the indices, Q, O and the BF16 extension K/V
        return self.batch * self.prefix * (2 * HKV * D + 8) + 2 * self.q_tokens * HQ * D * 2 + 2 * self.q_tokens * HKV * D * 2

    def dequant_into(self, s: int, k: torch.Tensor, v: torch.Tensor) -> None:
        """k, v [B, 8, P + 12, 128] BF16: the dequantized prefix, then the extension."""
        rows = self.kv_indices[s].view(self.batch, self.prefix)
        k[:, :, :self.prefix] = (self.k[s][rows].view(FP8).to(torch.bfloat16) * self.scales[0]).transpose(1, 2)
        v[:, :, :self.prefix] = (self.v[s][rows].view(FP8).to(torch.bfloat16) * self.scales[1]).transpose(1, 2)
        k[:, :, self.prefix:] = self.k_ext[s].view(self.batch, E, HKV, D).transpose(1, 2)
        v[:, :, self.prefix:] = self.v_ext[s].view(self.batch, E, HKV, D).transpose(1, 2)

    def dense(self, s: int) -> tuple[torch.Tensor, torch.Tensor]:
        k = torch.empty(self.batch, HKV, self.prefix + E, D, device="cuda", dtype=torch.bfloat16)
        v = torch.empty_like(k)
        self.dequant_into(s, k, v)
        return k, v


def reference(c: Case, s: int, b: int) -> tuple[torch.Tensor, torch.Tensor]:
    """FP64 output of request b [12, 32, 128] and the contract's bound (tests/oracles/attention_gqa4_extend.hpp)."""
    rows = c.kv_indices[s][b * c.prefix:(b + 1) * c.prefix]
    ks, vs = float(c.scales[0]), float(c.scales[1])
    k = torch.cat([c.k[s][rows].view(FP8).to(torch.float64) * ks, c.k_ext[s][b * E:(b + 1) * E].to(torch.float64)])  # [n, 8, 128]
    v = torch.cat([c.v[s][rows].view(FP8).to(torch.float64) * vs, c.v_ext[s][b * E:(b + 1) * E].to(torch.float64)])
    n = c.prefix + E
    q = c.q[s][b * E:(b + 1) * E].to(torch.float64).view(E, HKV, G, D)
    dots = torch.einsum("thgd,nhd->thgn", q, k)
    absdots = torch.einsum("thgd,nhd->thgn", q.abs(), k.abs())
    t = torch.arange(E, device="cuda").view(E, 1, 1, 1)
    visible = torch.arange(n, device="cuda").view(1, 1, 1, n) <= c.prefix + t
    s_ = (dots * SCALE).masked_fill(~visible, -math.inf)
    out = torch.einsum("thgn,nhd->thgd", torch.softmax(s_, dim=-1), v)
    vinf = v.abs().amax(0).view(1, HKV, 1, D)  # over all positions: >= the visible ones
    limit = bound(out, dots, absdots, SCALE, visible, vinf, n, 2.0 ** -23)  # 2^-23: the rounded scale c and fl(k_scale c)
    return out.reshape(E, HQ, D), limit.reshape(E, HQ, D)


def compare(c: Case, got: torch.Tensor, s: int, requests: list[int]) -> dict:
    return compare_rows(lambda b: reference(c, s, b), got, E, requests)


def sdpa_peers(c: Case, dense: list, check_requests: list[int]) -> list[dict]:
    from torch.nn.attention import SDPBackend, sdpa_kernel
    from torch.nn.attention.bias import causal_lower_right
    peers, n = [], c.prefix + E
    folded_mask = (torch.arange(n, device="cuda").view(1, n) <= c.prefix + (torch.arange(E * G, device="cuda") // G).view(-1, 1)).view(1, 1, E * G, n)
    for view in ("gqa", "folded"):
        for backend in (SDPBackend.CUDNN_ATTENTION, SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH):
            name = f"torch SDPA ({backend.name.lower()}, {'enable_gqa' if view == 'gqa' else 'GQA-folded view'}) on a BF16 copy"
            outs = [torch.empty_like(c.out[s]) for s in range(len(dense))]

            def make(s, view=view, backend=backend):
                k, v = dense[s]
                q = c.q[s].view(c.batch, E, HQ, D)
                if view == "gqa":
                    qq, mask = q.transpose(1, 2), causal_lower_right(E, n)

                    def call():
                        with sdpa_kernel(backend):
                            o = torch.nn.functional.scaled_dot_product_attention(qq, k, v, attn_mask=mask, scale=SCALE, enable_gqa=True)
                        outs[s].view(c.batch, E, HQ, D).copy_(o.transpose(1, 2))
                else:
                    qq = q.view(c.batch, E, HKV, G, D).permute(0, 2, 1, 3, 4).reshape(c.batch, HKV, E * G, D)

                    def call():
                        with sdpa_kernel(backend):
                            o = torch.nn.functional.scaled_dot_product_attention(qq, k, v, attn_mask=folded_mask, scale=SCALE)
                        outs[s].view(c.batch, E, HKV, G, D).copy_(o.view(c.batch, HKV, E, G, D).permute(0, 2, 1, 3, 4))
                return call

            peers.append(common.checked_peer(name, make, len(dense), lambda: compare(c, outs[0], 0, check_requests),
                                             "prefix dequantized to a BF16 copy beforehand (copy not timed here)"))
            torch.cuda.synchronize()
    return peers


def bench_shape(insts: tuple, batch: int, prefix: int, seed: int, bw: float, target_fraction: float | None, with_peers: bool = True) -> dict:
    """One shape: the plans in `insts` checked and timed, the native plan's floor, slice sweep and parts (stage one, its floor,
    each stage-two form alone and in a call, the plain launch), the SDPA peers and the dequantizing copy (`with_peers`)."""
    probe = Case(batch, prefix, 1, seed)
    sets = min(common.rotation(probe.bytes()), 64)
    del probe
    c = Case(batch, prefix, sets, seed)
    processors = torch.cuda.get_device_properties(0).multi_processor_count
    check_requests = sorted({0, batch - 1})
    timed = {}
    for inst in insts:  # the pair view, then the native plan; each checked before it counts
        slices = inst.slices_for(batch, processors)
        calls = [lambda s=s, inst=inst, slices=slices: inst.launch(c, s, slices) for s in range(sets)]
        for x in c.out:
            x.fill_(float("nan"))
        calls[0]()
        torch.cuda.synchronize()
        cmp = compare(c, c.out[0], 0, check_requests)
        again = c.out[0].clone()
        calls[0]()
        repeatable = bool(torch.equal(again.view(torch.int16), c.out[0].view(torch.int16)))
        timed[key_of(inst)] = (inst, slices, cmp, repeatable, again, common.bench_graph(calls, reps=15), common.bench_eager(calls, reps=15))
    native, native_slices = timed["Native"][0], timed["Native"][1]
    same_bits = None
    if "Instance" in timed:
        c.out[0].fill_(float("nan"))
        native.launch(c, 0, timed["Instance"][1])  # the native plan at the pair view's slice count: the same bits (results depend on the slices)
        torch.cuda.synchronize()
        same_bits = bool(torch.equal(timed["Instance"][4].view(torch.int16), c.out[0].view(torch.int16)))
    warpgroup = {}  # each warpgroup form: its bits against the native plan's at the native slices, its stage one and floor alone
    for k, (inst, slices, *_rest) in timed.items():
        if not k.startswith("Warpgroup"):
            continue
        want = None  # the native plan's bits at these slices, where its workspace holds them (results depend on the slices)
        if batch * slices <= CAP:
            c.out[0].fill_(float("nan"))
            native.launch(c, 0, slices)
            torch.cuda.synchronize()
            want = c.out[0].clone().view(torch.int16)
        c.out[0].fill_(float("nan"))
        inst.launch(c, 0, slices)
        torch.cuda.synchronize()
        same = None if want is None else bool(torch.equal(want, c.out[0].view(torch.int16)))  # before any other launch writes out
        part = lambda **kw: common.bench_graph([lambda s=s: inst.launch(c, s, slices, **kw) for s in range(sets)], reps=15)["median_us"]
        by_slices = {str(x): common.bench_graph([lambda s=s, x=x: inst.launch(c, s, x) for s in range(sets)], reps=15)["median_us"]
                     for x in sorted({slices - 1, slices + 1}) if 2 <= x <= min(16, inst.cap // batch)}
        warpgroup[inst.NAME] = {"graph_us": timed[k][5]["median_us"], "slices": slices, "same_bits_as_native": same,
                                "stage_one_graph_us": part(two=False), "floor_stage_one_graph_us": part(floor=True, two=False), "floor_us": part(floor=True),
                                "other_slices_graph_us": by_slices}
    same_bits = same_bits if all(w["same_bits_as_native"] is not False for w in warpgroup.values()) else False
    def graph_us(slices: int = native_slices, **kw) -> float:  # the native plan's call (or a part: kw as Native.launch's) over the sets
        return common.bench_graph([lambda s=s: native.launch(c, s, slices, **kw) for s in range(sets)], reps=15)["median_us"]
    floor = graph_us(floor=True)
    view_g = timed["Instance"][5]["median_us"] if "Instance" in timed else None
    sweep = {native_slices: timed["Native"][5]["median_us"]}  # the native plan at other slice counts (slices_for's choice checked)
    alts = {max(2, native_slices // 2), 2 * native_slices} | ({4 * native_slices} if batch == 16 else set())
    for alt in sorted({a for a in alts if a <= CAP // batch} - {native_slices}):
        sweep[alt] = graph_us(slices=alt)
    # Where the call's time goes, at the served slices: stage one alone, its floor alone, each stage-two form alone over the
    # workspace of the served call (and each in a whole call: its bits must be the served form's), the call with stage two
    # launched plainly (no programmatic edge).
    parts = {"stage_one": graph_us(two=False), "floor_stage_one": graph_us(floor=True, two=False),
             "plain_launch": graph_us(programmatic=False)}
    native.launch(c, 0, native_slices)
    torch.cuda.synchronize()
    served_bits = c.out[0].clone().view(torch.int16)
    forms = {}
    for f in TWO_FORMS:  # bits only (their times: bench/results/evidence/attention_extend_forms_h200.json)
        c.out[0].fill_(float("nan"))  # every form must write every output itself
        native.launch(c, 0, native_slices, form=f)
        torch.cuda.synchronize()
        forms[f] = {"same_bits": bool(torch.equal(served_bits, c.out[0].view(torch.int16)))}
    forms_same_bits = all(v["same_bits"] for v in forms.values())
    # The record is what tactics::attention_gqa4_extend serves (sm90a page size 1: the 6-stage warpgroup form at B = 1, the
    # 3-stage one above) where this run timed it, else the fastest plan.
    served = "Warpgroup6-128" if batch == 1 else "Warpgroup3-128"
    inst, slices, cmp, repeatable, _, g, e = timed[served] if served in timed else min(timed.values(), key=lambda t: t[5]["median_us"])
    own = warpgroup.get(inst.NAME)  # the served form's own grid: its floor and stage one (else the per-warp plan's)
    floor_rec = own["floor_us"] if own else floor
    one_rec, floor_one_rec = (own["stage_one_graph_us"], own["floor_stage_one_graph_us"]) if own else (parts["stage_one"], parts["floor_stage_one"])
    cmp = dict(cmp, beyond_bound=max(t[2]["beyond_bound"] for t in timed.values()))
    repeatable = all(t[3] for t in timed.values())
    copy_us, peers = None, []
    if with_peers:
        dense = [c.dense(s) for s in range(min(sets, 2))]
        copy_us = common.bench_graph([lambda s=s: c.dequant_into(s, *dense[s]) for s in range(len(dense))], reps=10)["median_us"]
        peers = sdpa_peers(c, dense, check_requests)
        del dense
        configs = attention_triton.configurations(HQ, HKV, D, E, SCALE, True, batch, torch.cuda.get_device_properties(0).multi_processor_count)
        peers.append(attention_triton.checked_peer(
            configs, sets, c.out[0],
            lambda cfg, s, out: lambda: cfg(c.q[s], c.k[s].view(FP8), c.v[s].view(FP8), c.qo, c.kv_indptr, c.kv_indices[s], c.scales, out,
                                            c.k_ext[s], c.v_ext[s]),
            lambda out: compare(c, out, 0, check_requests)))
    roofline = c.bytes() / bw * 1e6

    def line(rec: dict) -> str:
        return (f"{inst.NAME} B={batch} P={prefix} slices {slices}: graph {g['median_us']:.2f} us eager {e['median_us']:.2f} | pair view {view_g} "
                f"| native floor {floor:.2f} | warpgroup {warpgroup} | by slices {sweep} | same bits {same_bits} | parts {parts} | stage two forms "
                f"{ {f: v['same_bits'] for f, v in forms.items()} } | roofline "
                f"{roofline:.2f} ({roofline / g['median_us']:.1%}) | {cmp} | best peer {rec.get('best_peer')} {rec.get('best_peer_graph_us')} | copy {copy_us}")
    return shape_record("gqa4_extend", inst.NAME, {"batch": batch, "kv_len": prefix, "tq": E}, g, e, "contracts/attention/gqa4_extend.hpp",
                        check_requests, line, correct=cmp["beyond_bound"] == 0 and repeatable and same_bits is not False and forms_same_bits,
                        peers=peers, bytes_moved=c.bytes(), copy_bandwidth=bw, target_us=roofline / target_fraction if target_fraction else None,
                        floor_us=floor_rec, slices=slices, input_sets=sets, pair_view_graph_us=view_g, native_graph_us=timed["Native"][5]["median_us"],
                        native_slices=native_slices, warpgroup_forms=warpgroup, native_slices_graph_us={str(k): v for k, v in sorted(sweep.items())},
                        native_equals_pair_view_bits=same_bits, stage_one_graph_us=one_rec, floor_stage_one_graph_us=floor_one_rec,
                        plain_launch_graph_us=parts["plain_launch"], stage_two_forms=forms, stage_two_forms_same_bits=forms_same_bits,
                        fraction_of_floor=floor_rec / g["median_us"], native_floor_us=floor, native_stage_one_graph_us=parts["stage_one"], repeatable_bits=repeatable, dequant_copy_graph_us=copy_us,
                        fraction_of_roofline=roofline / g["median_us"], **cmp)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--objects", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--budget-s", type=float, default=100.0, help="start no new shape after this many seconds")
    ap.add_argument("--no-pair-view", action="store_true", help="time the native plan only (the pair view is the compared plan)")
    ap.add_argument("--warpgroup-stages", default="", help="comma-separated STAGES[:CAPACITY] of the WarpgroupMma native forms to time beside the plan")
    a = ap.parse_args()
    began = time.monotonic()
    torch.zeros(1, device="cuda")
    bw = common.copy_bandwidth()
    insts = (Native(a.objects),) if a.no_pair_view else (Instance(a.objects), Native(a.objects))
    insts += tuple(Warpgroup(a.objects, *map(int, x.split(":"))) for x in a.warpgroup_stages.split(",") if x)
    records, light = [], []
    # (batch, prefix, target fraction, full): full shapes are records (both plans, every peer); the others only the native
    # plan's parts (P = 256 at B = 64: where the prefix-independent time shows; B = 16, P = 2048: the slice rule's middle).
    plan = [(64, 4096, 0.85, True), (16, 4096, None, True), (1, 4096, None, True), (64, 1024, None, True), (16, 1024, None, True),
            (1, 1024, None, True), (64, 256, None, False), (16, 2048, None, False)]
    for i, (batch, prefix, target, full) in enumerate(plan):
        if time.monotonic() - began > a.budget_s:
            print(f"budget reached: {len(plan) - i} shapes not run", flush=True)
            break
        rec = bench_shape(insts if full else tuple(i for i in insts if key_of(i) != "Instance"), batch, prefix, 2600 + batch + prefix, bw, target, with_peers=full)
        (records if full else light).append(rec if full else {k: v for k, v in rec.items() if k != "peers"})
        torch.cuda.empty_cache()  # the shape's inputs went with bench_shape
        method = ("GQA4 extend (bench/attention_extend.py): CUDA graph replay and eager bursts over input sets rotated past L2, median of 15 "
                  "(peers 10); the pair view's three kernels and the native plan's two per call (stage two a programmatic dependent of stage "
                  "one, wide from 16 slices on), per warp and on the warpgroup matrix unit (warpgroup_forms: each form's call, stage one, "
                  "floor and other slice counts, its bits against the per-warp plan's at its slices); the record is the form dispatch serves "
                  "(else the fastest), every plan checked and bits compared; floor_us = the native grid's floor (its "
                  "stage one without the math, then stage two); stage_one_graph_us / floor_stage_one_graph_us: the native stage one / its floor "
                  "alone; stage_two_forms: each stage-two form's bits in a whole call against the served form's (their times: "
                  "bench/results/evidence/attention_extend_forms_h200.json); plain_launch_graph_us: the call with stage two launched without the programmatic edge; SDPA peers read a "
                  "dense BF16 copy of prefix + extension, timed separately (dequant_copy_graph_us); the Triton peer reads the FP8 prefix in "
                  "place and the BF16 extension; target_us = roofline / 0.85 at B=64, "
                  "P=4096; gqa4_extend_parts: the same parts at shapes without peers")
        shapes = {(r["shape"]["batch"], r["shape"]["kv_len"]) for r in records}  # the shapes this run measured replace theirs; the others stay
        common.merge_family(a.out, "attention", records,
                            lambda r: "gqa4" in r.get("contract", "") and (r["shape"]["batch"], r["shape"]["kv_len"]) in shapes, bw,
                            method=merged_method(a.out, method), gqa4_extend_parts=light)


def merged_method(path: str, method: str) -> str:
    """The file's method (bench/attention.py's, for the GQA8 records) with the extend one after it."""
    import json
    import os
    if not os.path.exists(path):
        return method
    old = json.load(open(path)).get("method", "")
    head = old.split(" || GQA4 extend")[0]
    return f"{head} || {method}" if head else method


if __name__ == "__main__":
    main()
