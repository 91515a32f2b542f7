"""What the paged FP8-KV attention benches share (bench/attention_extend.py: GQA4 extend; its GQA8 sibling
bench/attention.py computes the same things): the driver-call check, the ctypes image of
kernels/attention/gqa8_geometry.hpp's attention_gqa8_args, the contracts' bound of an FP64 reference
(contracts/attention/gqa8_paged.hpp, gqa4_extend.hpp), the comparison of a call's output with it, and the
record of a timed, checked shape.
"""
from __future__ import annotations

import ctypes
import math
from typing import Callable

import torch

from bench import common

BOUND = "|err| <= 2^-8 |ref| + V_inf (rho + (L/4 + 256) 2^-24 + 2^-20)"


def check(r: int, what: str) -> None:
    if r != 0:
        raise RuntimeError(f"{what}: CUresult {r}")


class Gqa8Args(ctypes.Structure):  # kernels/attention/gqa8_geometry.hpp: attention_gqa8_args
    _fields_ = [(n, ctypes.c_void_p) for n in ("q", "out", "k", "v", "qo", "kv_indptr", "kv_indices", "last", "k_scale", "v_scale",
                                                 "split_o", "split_stats")] + \
               [("q_tokens", ctypes.c_int64), ("slots", ctypes.c_int64), ("count", ctypes.c_int64), ("slices", ctypes.c_uint32)]


class LaunchAttribute(ctypes.Structure):  # CUlaunchAttribute: a 4-byte id padded to 8, then the 64-byte value union
    _fields_ = [("id", ctypes.c_int), ("pad", ctypes.c_char * 4), ("value", ctypes.c_int), ("rest", ctypes.c_char * 60)]


class LaunchConfig(ctypes.Structure):  # CUlaunchConfig
    _fields_ = [("grid", ctypes.c_uint * 3), ("block", ctypes.c_uint * 3), ("shared", ctypes.c_uint), ("stream", ctypes.c_void_p),
                ("attrs", ctypes.POINTER(LaunchAttribute)), ("count", ctypes.c_uint)]


def launch_programmatic(f, grid: tuple[int, int, int], block: int, stream, params, shared: int = 0) -> None:
    """A kernel launched as the runtime launches a programmatic dependent (runtime/backend.hpp): cuLaunchKernelEx with
    CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION (id 6) allowed, so it may start as its predecessor releases it."""
    attribute = LaunchAttribute(6, b"", 1)
    cfg = LaunchConfig((ctypes.c_uint * 3)(*grid), (ctypes.c_uint * 3)(block, 1, 1), shared, stream, ctypes.pointer(attribute), 1)
    check(_driver().cuLaunchKernelEx(ctypes.byref(cfg), f, params, None), "cuLaunchKernelEx (programmatic)")


def _driver() -> ctypes.CDLL:
    global _libcuda
    if _libcuda is None:
        _libcuda = ctypes.CDLL("libcuda.so.1")
    return _libcuda


_libcuda = None


def bound(out: torch.Tensor, dots: torch.Tensor, absdots: torch.Tensor, scale: float, visible: torch.Tensor, vinf: torch.Tensor, n: int,
          score_rounding: float) -> torch.Tensor:
    """The contract's bound on |out - ref| for FP64 `out` over `n` positions: dots / absdots the unscaled q.k and |q|.|k|
    (masked by `visible`), vinf the largest |v| per element, score_rounding the relative error of a rounded score."""
    delta = (scale * absdots * 2.0 ** -15 + (dots * scale).abs() * score_rounding).masked_fill(~visible, 0).amax(-1, keepdim=True)
    u = 2.0 ** -9 + 2.0 ** -22
    rho = torch.exp(2 * delta) * (1 + u) / (1 - u) - 1
    return out.abs() * 2.0 ** -8 + vinf * (rho + (n / 4 + 256) * 2.0 ** -24 + 2.0 ** -20)


def compare(reference: Callable[[int], tuple[torch.Tensor, torch.Tensor]], got: torch.Tensor, rows: int, requests: list[int]) -> dict:
    """got's rows b * rows .. (b + 1) * rows of each request b against reference(b) = (FP64 output, bound)."""
    beyond, max_err, dot, nr, ng = 0, 0.0, 0.0, 0.0, 0.0
    for b in requests:
        ref, limit = reference(b)
        g = got[b * rows:(b + 1) * rows].to(torch.float64)
        err = (g - ref).abs()
        beyond += int((~(err <= limit)).sum())
        max_err = max(max_err, float(err.max()))
        dot += float((g * ref).sum()); nr += float((ref * ref).sum()); ng += float((g * g).sum())
    return {"beyond_bound": beyond, "max_abs_err": max_err, "cosine": dot / math.sqrt(nr * ng) if nr and ng else None,
            "checked_requests": len(requests)}


def shape_record(contract: str, instance: str, shape: dict, graph: dict, eager: dict, policy: str, requests: list[int],
                 line: Callable[[dict], str], **fields) -> dict:
    """The results record of a timed shape (bounded by `policy`'s contract on `requests`), printed by `line`."""
    rec = common.record(contract, instance, shape, graph["median_us"], eager["median_us"],
                        comparison=f"bounded ({policy}): {BOUND} against the FP64 dequantized math, requests {requests}", **fields)
    print(line(rec), flush=True)
    return rec
