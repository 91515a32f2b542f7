"""The synthetic Qwen3.6-35B-A3B-FP8 step in torch: random weights at the checkpoint's dtypes and
layouts, the serving engine's pools (paged E4M3 KV cache per attention layer, GDN recurrent state
and conv history per GDN layer, the last slot of each pool the padding sentinel), and the decode
and verify steps, each op family either through netra's custom ops (netra.torch_ops) or through the
framework's torch implementation (the pure torch reference path; one family at a time for the
single-tactic toggles).

Framework path, always torch: the embedding (BF16 rows), the dense projections (FP8 E4M3 weights
with float32 128 x 128 block scales, as the checkpoint stores them; the projections of one input
are one GEMM (Dense): through torch._scaled_mm with per-token 1 x 128 activation scales at the row
counts where tune_dense measured it faster than BF16, else BF16 on weights dequantized once at
load), in_proj_ba (BF16), q/k head norms, partial RoPE, the KV append (E4M3 with a per-tensor
scale), the attention output gate, the LM head (BF16, FP32 logits). Every layer: add + RMSNorm
(zero-centred weights), mixer, add + RMSNorm, MoE.
"""
from __future__ import annotations

import contextlib
import copy
import dataclasses
import math
import statistics
import time

import torch
import torch.nn.functional as F

from netra import torch_ops as ops
from netra.step import dense_triton, glue, plan
from netra.step.plan import DRAFT_TOKENS, ModelConfig

FAMILIES = ("norm", "attention", "gdn", "moe", "argmax")
E4M3 = torch.float8_e4m3fn
ROPE_THETA = 1.0e7


# ---- weights ----------------------------------------------------------------------------------------

def _fp8_blocks(out_features, in_features, shape_prefix, gen, device):
    """E4M3 weights [*prefix, out, in] ~ N(0, 1/in) as q * scale with float32 scales per 128 x 128
    block (q ~ 64 N(0, 1): the E4M3 range holds it; each block's scale jittered by +-25 %)."""
    q = (torch.randn(*shape_prefix, out_features, in_features, device=device, generator=gen, dtype=torch.bfloat16) * 64).clamp(-448, 448)
    q = q.to(E4M3)
    s = torch.rand(*shape_prefix, out_features // 128, in_features // 128, device=device, generator=gen) * 0.5 + 0.75
    return q, s * (1.0 / (64 * math.sqrt(in_features)))


def _split_heads(qs, heads):
    """q_proj's (E4M3 rows, block scales), each head's 512 rows [q 256 | output gate 256], as the
    q rows of every head, then the gate rows of every head (whole 128-row blocks move)."""
    q, s = qs
    k = q.shape[1]
    qv, sv = q.view(torch.uint8).view(heads, 2, -1, k), s.view(heads, 2, -1, s.shape[1])
    return tuple((qv[:, j].reshape(-1, k).view(E4M3), sv[:, j].reshape(-1, s.shape[1])) for j in (0, 1))


def _cat(*parts):
    """(E4M3 rows, block scales) of several projections of one input, concatenated along N (as
    bytes: the codes move unchanged)."""
    return torch.cat([q.view(torch.uint8) for q, _ in parts]).view(E4M3), torch.cat([s for _, s in parts])


def dequantize(q, s):
    o, i = q.shape[-2], q.shape[-1]
    return (q.float().view(*q.shape[:-2], o // 128, 128, i // 128, 128) * s[..., :, None, :, None]).view(q.shape)


class Dense:
    """The projections of one input as one GEMM on the framework path: `parts` are FP8 E4M3 weights
    [n_i, K] with float32 128 x 128 block scales (the checkpoint's), concatenated along N; `tail` an
    optional BF16 weight [n_t, K] (the GDN's in_proj_ba). Returns [M, n_i] per part (+ [M, n_t]):
    column views of one product. At a row count M in `fp8_rows` (set by the measured choice,
    tune_dense) the parts go through fp8_blockwise_mm and the tail through its own BF16 GEMM; at
    every other M one BF16 GEMM multiplies the parts dequantized once at load with the tail
    appended. Both paths of the step (netra's and the torch reference) call the same objects."""

    def __init__(self, parts, tail=None, fp8_rows=(), forms=None):
        self.q, self.s = _cat(*parts)
        w = dequantize(self.q, self.s).to(torch.bfloat16)
        self.tail = tail
        self.w = w if tail is None else torch.cat([w, tail])
        self.splits = [q.shape[0] for q, _ in parts]
        self.fp8_rows = frozenset(fp8_rows)
        self.forms = dict(forms or {})  # {M: BF16 form (plan.BF16_FORMS)}; "default" where absent

    def __call__(self, x):
        if x.shape[0] not in self.fp8_rows:
            y = bf16_mm(x, self.w, self.forms.get(x.shape[0], "default"))
            return list(y.split(self.splits + ([self.tail.shape[0]] if self.tail is not None else []), dim=1))
        out = list(fp8_blockwise_mm(x, self.q, self.s).split(self.splits, dim=1))
        return out + ([x @ self.tail.t()] if self.tail is not None else [])


@contextlib.contextmanager
def blas_settings(backend, split_k):
    """torch's BLAS backend preference and BF16 split-K permission for the calls inside (cuBLAS
    picks its kernel when a call is issued, also inside a graph capture: the replay keeps it);
    restored after."""
    if backend is None and split_k:
        yield
        return
    cuda = torch.backends.cuda
    lib, red = cuda.preferred_blas_library(), cuda.matmul.allow_bf16_reduced_precision_reduction
    red = tuple(red) if isinstance(red, (tuple, list)) else (bool(red), True)
    try:
        if backend is not None:
            cuda.preferred_blas_library(backend)
        if not split_k:
            cuda.matmul.allow_bf16_reduced_precision_reduction = (False, False)
        yield
    finally:
        cuda.matmul.allow_bf16_reduced_precision_reduction = red if not red[1] else red[0]  # a plain bool where split-K was allowed
        cuda.preferred_blas_library(lib)


def bf16_mm(x, w, form="default"):
    """x [M, K] @ w [N, K]^T in BF16 computed in `form` (plan.BF16_FORMS): the same operands, each
    form within plan.dense_bf16_bound of the exact product. "swap" (M = 1) asks cuBLAS for w x^T,
    whose [N, 1] column is the row; "gemv_*" and "split_*" are the step's Triton kernels
    (netra.step.dense_triton). A form outside its plan.FORM_DOMAIN is refused (ValueError)."""
    call, backend, split_k = plan.form_parts(form)
    if form not in plan.bf16_forms(x.shape[0], w.shape[0]):
        raise ValueError(f"the {form} form takes {plan.FORM_DOMAIN[form]} (rows from, to, N at most), got M = {x.shape[0]}, N = {w.shape[0]}")
    if call == "gemv":
        return dense_triton.gemv(x, w, form)
    if call == "split":
        return dense_triton.split_k(x, w, form)
    with blas_settings(backend, split_k):
        return torch.mm(w, x.t()).view(1, -1) if call == "swap" else x @ w.t()


FP8_MIN_ROWS = 16  # torch's block-scaled _scaled_mm refuses M = 1 on the H200 (bench/results/step_h200.json): fewer rows are padded


def quantize_tokens(x):
    """Per-token, per-128 E4M3 quantization of BF16 activations [M, K] (1 x 128 blocks) for the FP8
    GEMM: scale = max(amax, 2^-100) / 448 (a product with the rounded 1/448; x / scale stays within
    448 (1 + 2^-22), which E4M3's rounding takes to 448), codes e4m3(x / scale). The scales come out
    [M, K / 128] column-major, the layout _scaled_mm takes. Five kernels."""
    m, k = x.shape
    xv = x.view(m, k // 128, 128)
    amax = torch.linalg.vector_norm(xv, ord=math.inf, dim=-1, dtype=torch.float32)
    scale = torch.empty(k // 128, m, device=x.device, dtype=torch.float32).t()
    torch.mul(amax.clamp_min_(2.0 ** -100), 1.0 / 448.0, out=scale)
    return (xv / scale.unsqueeze(-1)).to(E4M3).view(m, k), scale


def torch_quantize(x, rows):
    """quantize_tokens of x padded with zero rows to `rows` (glue.quantize is the same in one kernel)."""
    return quantize_tokens(F.pad(x, (0, 0, 0, rows - x.shape[0])) if rows > x.shape[0] else x)


def fp8_blockwise_mm(x, wq, ws):
    """bf16 [M, N] = x [M, K] @ dequant(wq, ws)^T through torch._scaled_mm with 1 x 128 activation
    and 128 x 128 weight scales (cuBLAS block scaling on sm_90; scale_b as the transposed view, the
    layout the H200 admits); fewer than FP8_MIN_ROWS rows are padded with zero rows first."""
    m = x.shape[0]
    xq, xs = (glue.quantize if glue.fused() else torch_quantize)(x, max(m, FP8_MIN_ROWS))
    y = torch._scaled_mm(xq, wq.t(), scale_a=xs, scale_b=ws.t(), out_dtype=torch.bfloat16)
    return y[:m] if m < FP8_MIN_ROWS else y


def _graph_us(fn, calls, reps=7):
    """Median µs of one of `calls` calls in a CUDA graph of fn() (events around each replay)."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        fn()
    torch.cuda.current_stream().wait_stream(side)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        fn()
    g.replay()
    us, _ = replay_us(g, reps)
    del g
    return us / calls


def replay_us(graph, reps):
    """Median µs per replay of a CUDA graph (events around each replay), and the samples."""
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    samples = []
    for _ in range(reps):
        start.record()
        graph.replay()
        end.record()
        end.synchronize()
        samples.append(start.elapsed_time(end) * 1000.0)
    return statistics.median(samples), samples


def dense_group_shapes(cfg):
    """{group: ([(n_i, K)] of its FP8 parts, tail rows)}, in the order Weights fuses them."""
    out = {}
    for kind in ("gdn", "attention"):
        shapes = cfg.dense_shapes(kind)
        for group, names in cfg.dense_groups(kind).items():
            out[group] = ([shapes[n] for n in names], 2 * cfg.gdn_v_heads if group == "gdn_in" else 0)
    return out


def tune_dense(cfg, device, rows=None, seconds=40.0, margin=0.97, log=print):
    """The measured choice of the dense path, per dense group shape and GEMM row count M: each BF16
    form of plan.bf16_forms(M) (checked first against the FP64 product within plan.dense_bf16_bound)
    and the FP8 block-scaled GEMM (activation quantization and, for M < 16, the padding included),
    graph-replayed over weight copies that rotate past the L2. The BF16 form: plan.choose_form (the
    fastest correct one below `margin` x the default's time); FP8 where it is correct (within 2^-6
    relative of the product of the dequantized operands) and below `margin` x that form's time.
    Returns {group: {str(M): {bf16_forms: {form: {us, ok, worst} | {error}}, bf16_form, bf16_us (the
    default's), bf16_best_us, fp8_us, fp8_rel_err | fp8_error, chosen}}} (groups of one shape
    measured once)."""
    rows = cfg.dense_rows() if rows is None else rows
    gen = torch.Generator(device=device).manual_seed(7)
    t_end = time.time() + seconds
    table, by_shape = {}, {}
    for group, (parts, tail_rows) in dense_group_shapes(cfg).items():
        key = (tuple(parts), tail_rows)
        if key in by_shape:
            table[group] = by_shape[key]
            continue
        k = parts[0][1]
        n = sum(o for o, _ in parts) + tail_rows
        copies = max(2, math.ceil(3 * 2 ** 27 / (n * k * 2)))  # BF16 copies of about 400 MB: far past the 60 MB L2
        dense = [Dense([_fp8_blocks(o, i, (), gen, device) for o, i in parts],
                       (torch.randn(tail_rows, k, device=device, generator=gen) * k ** -0.5).to(torch.bfloat16) if tail_rows else None)
                 for _ in range(copies)]
        ref_w = dequantize(dense[0].q, dense[0].s)
        w64 = dense[0].w.double()
        rel, env_c = plan.dense_bf16_bound(k)
        entries = {}
        for m in rows:
            if time.time() > t_end:
                entries[str(m)] = {"chosen": "bf16", "skipped": "time"}
                continue
            x = torch.randn(m, k, device=device, generator=gen).to(torch.bfloat16)
            e = {"bf16_forms": {}}
            ref = x.double() @ w64.t()
            bound = rel * ref.abs() + env_c * (x.double().abs() @ w64.abs().t())
            for d in dense:
                d.fp8_rows = frozenset()
            for form in plan.bf16_forms(m, n):
                f = e["bf16_forms"][form] = {}
                try:
                    f["worst"] = float(((bf16_mm(x, dense[0].w, form).double() - ref).abs() / bound).max())
                    f["ok"] = f["worst"] <= 1.0
                    for d in dense:
                        d.forms = {m: form}
                    f["us"] = _graph_us(lambda: [d(x) for d in dense + dense], 2 * copies)
                except Exception as ex:  # a form this torch / cuBLAS refuses (or cannot capture): not a candidate
                    f.clear()
                    f["error"] = f"{type(ex).__name__}: {str(ex)[:400]}"
                    torch.cuda.synchronize()
            del ref, bound
            e["bf16_form"] = plan.choose_form(e["bf16_forms"], margin)
            e["bf16_us"] = e["bf16_forms"].get("default", {}).get("us", float("nan"))
            e["bf16_best_us"] = e["bf16_forms"].get(e["bf16_form"], {}).get("us", float("nan"))
            for d in dense:
                d.forms = {}
            try:
                dense[0].fp8_rows = frozenset([m])
                got = torch.cat(dense[0](x)[:len(parts)], dim=1).float()
                xq, xs = quantize_tokens(x)
                want = (xq.float().view(m, k // 128, 128) * xs.unsqueeze(-1)).view(m, k) @ ref_w.t()
                e["fp8_rel_err"] = float((got - want).norm() / want.norm())
                fp8_ok = e["fp8_rel_err"] < 2 ** -6
            except Exception as ex:  # a refusal of this torch / cuBLAS at this M: BF16 there
                e["fp8_error"] = f"{type(ex).__name__}: {str(ex)[:400]}"
                fp8_ok = False
            if fp8_ok:
                for d in dense:
                    d.fp8_rows = frozenset([m])
                try:
                    e["fp8_us"] = _graph_us(lambda: [d(x) for d in dense + dense], 2 * copies)
                except Exception as ex:  # e.g. a capture this torch refuses: that path is not timed, BF16 stays the default
                    e["fp8_error"] = f"{type(ex).__name__}: {str(ex)[:400]}"
                    torch.cuda.synchronize()
            fp8_ok = fp8_ok and "fp8_us" in e and not math.isnan(e["bf16_best_us"])
            e["chosen"] = "fp8" if fp8_ok and e["fp8_us"] < margin * e["bf16_best_us"] else "bf16"
            entries[str(m)] = e
        log(f"dense {group} {n}x{k}: " + ", ".join(
            f"M={m} {e['chosen']}" + ("" if "skipped" in e else
                                      f" ({e['bf16_form']} {e['bf16_best_us']:.1f}, default {e['bf16_us']:.1f} / fp8 {e.get('fp8_us', float('nan')):.1f} us)")
            for m, e in entries.items()))
        del dense, ref_w, w64
        table[group] = by_shape[key] = entries
    return table


def fp8_rows_of(table):
    """{group: the row counts M where the tuned table chose FP8}."""
    return {g: frozenset(int(m) for m, e in entries.items() if e.get("chosen") == "fp8") for g, entries in table.items()}


def dense_label(fp8_rows, m, forms=None):
    """How the dense path multiplies M rows: "bf16", or "fp8:<groups>" (the groups on FP8), then
    "; <group>=<form>" for each BF16 group whose form is not the default."""
    groups = sorted(g for g, ms in fp8_rows.items() if m in ms)
    label = "fp8:" + "+".join(groups) if groups else "bf16"
    other = sorted(f"{g}={fs[m]}" for g, fs in (forms or {}).items() if m in fs and g not in groups)
    return label + "".join(f"; {o}" for o in other)


_LM_HEAD_FP32_OUT = []  # decided by the first (eager) call: does torch.mm take out_dtype here?


def lm_head(h, w):
    """FP32 logits [R, vocab] = h @ w^T (BF16 operands, FP32 accumulation and output where torch
    offers torch.mm(..., out_dtype=float32), else the BF16 product widened)."""
    if not _LM_HEAD_FP32_OUT:
        try:
            torch.mm(h[:1], w[:128].t(), out_dtype=torch.float32)
            _LM_HEAD_FP32_OUT.append(True)
        except (TypeError, RuntimeError):
            _LM_HEAD_FP32_OUT.append(False)
    return torch.mm(h, w.t(), out_dtype=torch.float32) if _LM_HEAD_FP32_OUT[0] else (h @ w.t()).float()


class Weights:
    """Random weights of every layer at the checkpoint's formats (one generator, `seed`)."""

    def __init__(self, cfg: ModelConfig, device, seed=0, fp8_rows=None, forms=None):
        """fp8_rows: {dense group: row counts M multiplied in FP8} (fp8_rows_of(tune_dense(...)));
        None: BF16 at every M. forms: {dense group: {M: BF16 form}} (plan.dense_forms_of of the same
        table); None: the default form everywhere."""
        g = torch.Generator(device=device).manual_seed(seed)
        h = cfg.hidden
        bf = lambda *shape, std=1.0: (torch.randn(*shape, device=device, generator=g) * std).to(torch.bfloat16)  # noqa: E731
        self.cfg, self.fp8_rows = cfg, {k: frozenset(v) for k, v in (fp8_rows or {}).items()}
        self.forms = {k: dict(v) for k, v in (forms or {}).items()}
        dense = lambda group, parts, tail=None: Dense(parts, tail, self.fp8_rows.get(group, ()), self.forms.get(group))  # noqa: E731
        self.embed = bf(cfg.vocab, h)
        self.lm_head = bf(cfg.vocab, h, std=h ** -0.5)
        self.final_norm = bf(h, std=0.1)
        self.layers = []
        for kind in cfg.layer_kinds():
            L = {"kind": kind, "input_norm": bf(h, std=0.1), "post_norm": bf(h, std=0.1)}
            proj = {name: _fp8_blocks(o, i, (), g, device) for name, (o, i) in cfg.dense_shapes(kind).items()}
            if kind == "attention":
                q_norm, k_norm = bf(cfg.head_dim, std=0.1), bf(cfg.head_dim, std=0.1)
                # the head norms' zero-centred weights (1 + w in FP32) per head of [q heads | k heads]
                L["qk_norm"] = torch.cat([(1.0 + q_norm.float()).expand(cfg.q_heads, -1), (1.0 + k_norm.float()).expand(cfg.kv_heads, -1)])
                q, gate = _split_heads(proj["q_proj"], cfg.q_heads)
                L["attn_in"] = dense("attn_in", [_cat(q, proj["k_proj"]), gate, proj["v_proj"]])
                L["attn_out"] = dense("attn_out", [proj["o_proj"]])
            else:
                L["in_proj_ba"] = bf(2 * cfg.gdn_v_heads, h, std=h ** -0.5)
                L["conv"] = bf(cfg.gdn_channels, cfg.conv_taps, std=0.5)
                L["a_log"] = torch.rand(cfg.gdn_v_heads, device=device, generator=g) * 2 - 1
                L["dt_bias"] = torch.rand(cfg.gdn_v_heads, device=device, generator=g) * 2 - 1
                L["gdn_norm"] = (1 + torch.randn(cfg.gdn_head_dim, device=device, generator=g) * 0.1).to(torch.bfloat16)
                L["gdn_in"] = dense("gdn_in", [proj["in_proj_qkv"], proj["in_proj_z"]], L["in_proj_ba"])
                L["gdn_out"] = dense("gdn_out", [proj["out_proj"]])
            L["router"] = bf(cfg.experts, h, std=0.02)
            L["shared_gate"] = bf(h, std=0.02)
            L["w13"], L["s13"] = _fp8_blocks(2 * cfg.expert_intermediate, h, (cfg.experts + 1,), g, device)
            L["w2"], L["s2"] = _fp8_blocks(h, cfg.expert_intermediate, (cfg.experts + 1,), g, device)
            self.layers.append(L)


# ---- pools ------------------------------------------------------------------------------------------

class Pools:
    """The engine's state: per attention layer a KV pool (uint8 holding E4M3, [slots, 2, 256]) with
    per-layer float32 k/v scales; per GDN layer the recurrent state (float32 [slots, 32, 128, 128])
    and conv history (bf16 [slots, 8192, 3], channel-major). Request r owns GDN slot gdn_slot[r]
    and the KV slots kv_slot[r, position] (a random permutation of the pool); the last slot of each
    pool is the sentinel that padded rows point at."""

    def __init__(self, cfg: ModelConfig, device, requests: int, kv_len: int, seed=1):
        g = torch.Generator(device=device).manual_seed(seed)
        self.cfg, self.requests, self.kv_len = cfg, requests, kv_len
        self.capacity = kv_len + DRAFT_TOKENS
        kv_slots = requests * self.capacity + 1
        self.kv_sentinel, self.gdn_sentinel = kv_slots - 1, requests
        self.kv_slot = torch.randperm(kv_slots - 1, device=device, generator=g).view(requests, self.capacity)
        self.gdn_slot = torch.randperm(requests, device=device, generator=g).to(torch.int32)
        self.kv, self.state, self.conv = [], [], []
        for kind in cfg.layer_kinds():
            if kind == "attention":
                k = (torch.randn(kv_slots, cfg.kv_heads, cfg.head_dim, device=device, generator=g) * 2).to(E4M3).view(torch.uint8)
                v = (torch.randn(kv_slots, cfg.kv_heads, cfg.head_dim, device=device, generator=g) * 2).to(E4M3).view(torch.uint8)
                scales = torch.rand(2, device=device, generator=g) * 0.2 + 0.4
                self.kv.append((k, v, scales[0:1], scales[1:2]))
                self.state.append(None)
                self.conv.append(None)
            else:
                self.kv.append(None)
                self.state.append(torch.randn(requests + 1, cfg.gdn_v_heads, cfg.gdn_head_dim, cfg.gdn_head_dim, device=device,
                                              generator=g) * 0.05)
                self.conv.append((torch.randn(requests + 1, cfg.gdn_channels, cfg.conv_taps - 1, device=device, generator=g)
                                  * 0.5).to(torch.bfloat16))

    def snapshot(self, slots=None):
        """Copies of the GDN state and conv history (of `slots` only, a tensor of GDN slots, when
        given); the KV pools need none (a step's KV append rewrites the same slots)."""
        idx = None if slots is None else torch.as_tensor(slots, device=self.kv_slot.device).long()
        keep = []
        for s, c in zip(self.state, self.conv):
            if s is None:
                keep.append(None)
            else:
                keep.append((s.clone(), c.clone()) if idx is None else (s[idx], c[idx]))
        return idx, keep

    def restore(self, snap):
        idx, keep = snap
        for s, c, saved in zip(self.state, self.conv, keep):
            if saved is None:
                continue
            if idx is None:
                s.copy_(saved[0])
                c.copy_(saved[1])
            else:
                s.index_copy_(0, idx, saved[0])
                c.index_copy_(0, idx, saved[1])


# ---- one bucket's static inputs ----------------------------------------------------------------------

class Batch:
    """A bucket's graph inputs (device tensors allocated once; set() fills them between replays):
    B request rows of T tokens, live rows first, padded rows on the sentinel slots."""

    def __init__(self, pools: Pools, phase: str, bucket: int):
        self.pools, self.phase, self.B = pools, phase, bucket
        self.T = DRAFT_TOKENS if phase == "verify" else 1
        d, R, cap = pools.kv_slot.device, bucket * self.T, pools.capacity
        self.tokens = torch.zeros(R, dtype=torch.int64, device=d)
        self.positions = torch.zeros(R, dtype=torch.int64, device=d)
        self.gdn_slots = torch.zeros(bucket, dtype=torch.int32, device=d)
        self.append_slots = torch.zeros(R, dtype=torch.int64, device=d)
        self.qo_indptr = torch.arange(bucket + 1, dtype=torch.int64, device=d) * self.T
        self.kv_indptr = torch.zeros(bucket + 1, dtype=torch.int32, device=d)
        self.kv_indices = torch.zeros(bucket * cap, dtype=torch.int64, device=d)
        self.kv_table = torch.zeros(bucket, cap, dtype=torch.int64, device=d)
        self.kv_lens = torch.zeros(bucket, dtype=torch.int32, device=d)
        self.accepted = torch.zeros(bucket, dtype=torch.int32, device=d)
        self.live = 0

    def nbytes(self):
        return sum(t.numel() * t.element_size() for t in (self.tokens, self.positions, self.gdn_slots, self.append_slots, self.qo_indptr,
                                                          self.kv_indptr, self.kv_indices, self.kv_table, self.kv_lens, self.accepted))

    def set(self, requests, tokens, context, accepted=None):
        """Live `requests` (indices into the pools), their input tokens [live * T] and context
        lengths; `accepted` (verify) per live request in 1..T. Host work between replays."""
        p, T, B = self.pools, self.T, self.B
        live = len(requests)
        if live > B:
            raise ValueError(f"{live} live requests do not fit bucket {B}")
        self.live = live
        req = torch.tensor(list(requests), dtype=torch.int64)
        ctx = torch.tensor(list(context), dtype=torch.int64)
        if int(ctx.max()) + T > p.capacity:
            raise ValueError("a context length exceeds the KV pool's capacity")
        lens = torch.full((B,), T, dtype=torch.int64)
        lens[:live] = ctx + T
        table = torch.full((B, p.capacity), p.kv_sentinel, dtype=torch.int64)
        table[:live] = p.kv_slot[req.to(p.kv_slot.device)].cpu()
        pos = torch.zeros(B, T, dtype=torch.int64)
        pos[:live] = ctx.view(-1, 1) + torch.arange(T).view(1, -1)
        append = torch.full((B, T), p.kv_sentinel, dtype=torch.int64)
        append[:live] = torch.gather(table[:live], 1, pos[:live])
        gslots = torch.full((B,), p.gdn_sentinel, dtype=torch.int32)
        gslots[:live] = p.gdn_slot[req.to(p.gdn_slot.device)].cpu()
        toks = torch.zeros(B * T, dtype=torch.int64)
        toks[:live * T] = torch.as_tensor(tokens, dtype=torch.int64)
        indices = torch.cat([table[b, :lens[b]] for b in range(B)])
        self.kv_indices.zero_()
        self.kv_indices[:indices.numel()].copy_(indices)
        self.kv_indptr.copy_(torch.cat([torch.zeros(1, dtype=torch.int64), lens.cumsum(0)]).to(torch.int32))
        acc = torch.full((B,), 0, dtype=torch.int32)
        if accepted is not None:
            acc[:live] = torch.as_tensor(accepted, dtype=torch.int32)
        for dst, src in ((self.tokens, toks), (self.positions, pos.view(-1)), (self.gdn_slots, gslots), (self.append_slots, append.view(-1)),
                         (self.kv_table, table), (self.kv_lens, lens.to(torch.int32)), (self.accepted, acc)):
            dst.copy_(src)


# ---- the step -------------------------------------------------------------------------------------------

def _rope_tables(cfg, device, max_pos):
    inv = 1.0 / ROPE_THETA ** (torch.arange(0, cfg.rotary_dim, 2, device=device).float() / cfg.rotary_dim)
    f = torch.outer(torch.arange(max_pos, device=device).float(), inv)
    f = torch.cat([f, f], dim=-1)
    return f.cos(), f.sin()


def _head_norm(x, w1, eps):
    """RMSNorm per head in FP32 with the zero-centred weight w1 = 1 + w (FP32, per head), to BF16."""
    xf = x.float()
    return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps) * w1).to(torch.bfloat16)


def _rope_(x, cos, sin, rd):
    """Partial RoPE (neox halves) on the first rd dims of the BF16 heads x, in place, FP32 math."""
    xr = x[..., :rd].float()
    rot = torch.cat([-xr[..., rd // 2:], xr[..., :rd // 2]], dim=-1)
    x[..., :rd] = xr * cos + rot * sin
    return x


def _kv_codes(x, scale):
    """E4M3 codes of x / scale (FP32), saturating at +-448, NaN kept (netra's conversion), as bytes."""
    return (x / scale).clamp_(-448.0, 448.0).to(E4M3).view(torch.uint8)


def torch_attn_pre(qk, v, w1, cos, sin, kb, vb, slots, ks, vs, eps):
    """The attention layer's glue before netra's attention, in torch: the q and k heads of qk
    [R, q heads + k heads, D] RMS-normed (w1 = 1 + w per head) and rotated, the k and v codes
    appended to the pools at `slots`; returns q [R, q heads, D] (contiguous). glue.attn_pre is the
    same in one kernel."""
    kh = v.shape[1]
    qk = _rope_(_head_norm(qk, w1, eps), cos, sin, cos.shape[-1])
    kb.index_copy_(0, slots, _kv_codes(qk[:, -kh:], ks))
    vb.index_copy_(0, slots, _kv_codes(v, vs))
    return qk[:, :-kh].contiguous()


def torch_gate_mul(o, gate):
    """o * sigmoid(gate) in BF16 (torch's sigmoid: FP32, rounded), [R, heads * D]."""
    return (o * torch.sigmoid(gate)).view(o.shape[0], -1)


def select_glue(device):
    """The attention glue: the fused Triton kernels where they agree with the torch glue on this
    GPU (glue.select), else torch; returns the verdict."""
    return glue.select(device, lambda qk, v, w1, cos, sin, kb, vb, slots, ks, vs, eps, o, gate: (
        torch_attn_pre(qk, v, w1, cos, sin, kb, vb, slots, ks, vs, eps), torch_gate_mul(o, gate)), torch_quantize)


class Step:
    """The decode / verify step over `weights` and `pools`; `backend[family]` is "netra" (the
    custom ops, netra serving every call its tactics admit) or "torch" (the framework path).

    Teacher forcing (eager; set `forcing` to a list on a step whose families are all "torch"): at
    every netra op the step also runs netra's custom op on copies of exactly the torch path's
    inputs, then the torch implementation continues the reference; netra.step.oracle.check
    appends one row per op (its outputs against the op's derived bound)."""

    def __init__(self, weights: Weights, pools: Pools, backend=None):
        self.w, self.p, self.cfg = weights, pools, weights.cfg
        self.backend = {f: "netra" for f in FAMILIES} if backend is None else dict(backend)
        self.cos, self.sin = _rope_tables(self.cfg, pools.kv_slot.device, pools.capacity + 1)
        self.keep = None  # eager only: set to a list to keep each layer's routes and each GDN layer's verify inputs
        self.trace = None  # eager only: set to a list to get (layer, what, tensor) per layer (see __call__)
        self.forcing = None  # eager only: a list gets the teacher-forced oracle's rows
        self.calls = None  # eager only: a list gets (family, netra_fn, args) of every op netra's backend ran (replayed alone by bench/step.py)
        self._layer, self._batch = 0, None

    def _on(self, family):
        return self.backend[family] == "netra"

    def _dispatch(self, family, op, args, mutated, netra_fn, torch_fn):
        """netra_fn(*args) or torch_fn(*args) by the family's backend; both write the `mutated`
        argument positions. Under teacher forcing: netra on copies, torch on the originals, checked."""
        if self.forcing is None:
            (netra_fn if self._on(family) else torch_fn)(*args)
            if self.calls is not None and self._on(family):
                self.calls.append((family, netra_fn, args))
            return
        from netra.step import oracle  # torch-only module, imported where it is used
        if any(self._on(f) for f in FAMILIES):
            raise ValueError("teacher forcing runs on the torch path: every family must be on torch")
        before = [a.clone() if i in mutated and a is not None else a for i, a in enumerate(args)]
        copies = [a.clone() if i in mutated and a is not None else a for i, a in enumerate(args)]
        with ops.recording() as rec:
            netra_fn(*copies)
        torch_fn(*args)
        b = self._batch
        ctx = {"layer": self._layer, "rows": b.live * b.T, "live": b.live, "T": b.T}
        self.forcing.append(oracle.check(op, before, copies, list(args), ctx, rec[0]["served"] if rec else "none"))

    def _norm(self, kind, x, residual, weight, out, zero_centred=True, gate=None):
        eps, zero_centred = self.cfg.rms_eps, zero_centred and kind != "gated"  # the GDN norm's weight is plain
        if kind == "add":
            self._dispatch("norm", "add_rms_norm", (x, residual, weight, out, eps, zero_centred), (1, 3), torch.ops.netra.add_rms_norm,
                           lambda x, r, w, o, e, z: ops.fallback_norm("add", x, r, None, w, o, e, z))
        elif kind == "gated":
            self._dispatch("norm", "gated_rms_norm", (x, gate, weight, out, eps), (3,), torch.ops.netra.gated_rms_norm,
                           lambda x, g, w, o, e: ops.fallback_norm("gated", x, None, g, w, o, e, False))
        else:
            self._dispatch("norm", "rms_norm", (x, weight, out, eps, zero_centred), (2,), torch.ops.netra.rms_norm,
                           lambda x, w, o, e, z: ops.fallback_norm("rms", x, None, None, w, o, e, z))
        return out

    def _attention(self, i, L, h, b: Batch):
        cfg, R, T = self.cfg, h.shape[0], b.T
        kb, vb, ks, vs = self.p.kv[i]
        heads, hd = cfg.q_heads, cfg.head_dim
        qk, gate, v = L["attn_in"](h)  # one GEMM: [q heads | k heads], the q heads' output gates, v
        qk, gate, v = qk.view(R, heads + cfg.kv_heads, hd), gate.view(R, heads, hd), v.view(R, cfg.kv_heads, hd)
        pre = (qk, v, L["qk_norm"], *self._rope_cs, kb, vb, b.append_slots, ks, vs, cfg.rms_eps)
        if glue.fused():
            q = torch.empty(R, heads, hd, dtype=torch.bfloat16, device=h.device)
            glue.attn_pre(*pre[:5], q, *pre[5:])
        else:
            q = torch_attn_pre(*pre)
        o = torch.empty_like(q)
        # the slot table rides along: the op's capturable fallback reads it where netra declines
        self._dispatch("attention", "attention_gqa8", (q, kb, vb, b.qo_indptr, b.kv_indptr, b.kv_indices, ks, vs, o, None,
                                                       "verify" if T > 1 else "decode", T, 1, cfg.head_dim ** -0.5, b.kv_table, b.kv_lens),
                       (8,), torch.ops.netra.attention_gqa8, lambda *a: ops.fallback_attention_gqa8(*a[:10], *a[11:]))  # it takes no phase
        return L["attn_out"](glue.gate_mul(o, gate) if glue.fused() else torch_gate_mul(o, gate))[0]

    def _gdn(self, i, L, h, b: Batch):
        cfg, R, T = self.cfg, h.shape[0], b.T
        state, conv = self.p.state[i], self.p.conv[i]
        qkv, z, ba = L["gdn_in"](h)  # column views of one product (the conv and the gated norm take a row stride)
        bb, aa = ba[:, :cfg.gdn_v_heads], ba[:, cfg.gdn_v_heads:]  # column views: the precompute takes their row stride
        y = torch.empty(qkv.shape, dtype=qkv.dtype, device=qkv.device)
        windows = torch.empty(b.B, T, cfg.gdn_channels, cfg.conv_taps - 1, dtype=torch.bfloat16, device=h.device) if T > 1 else None
        self._dispatch("gdn", "gdn_conv", (qkv, L["conv"], y, b.gdn_slots, conv, windows), (2, 4, 5), torch.ops.netra.gdn_conv,
                       ops.fallback_gdn_conv)
        q = torch.empty(R, cfg.gdn_qk_heads, cfg.gdn_head_dim, device=h.device)
        k = torch.empty_like(q)
        decay = torch.empty(R, cfg.gdn_v_heads, device=h.device)
        beta = torch.empty_like(decay)
        self._dispatch("gdn", "gdn_precompute", (y, aa, bb, L["a_log"], L["dt_bias"], q, k, decay, beta), (5, 6, 7, 8),
                       torch.ops.netra.gdn_precompute, ops.fallback_gdn_precompute)
        o = torch.empty(R, cfg.gdn_v_heads, cfg.gdn_head_dim, dtype=torch.bfloat16, device=h.device)
        core = (q, k, y, decay, beta, state, b.gdn_slots, o)
        if T > 1:
            self._dispatch("gdn", "gdn_verify", core, (7,), torch.ops.netra.gdn_verify,
                           lambda *a: ops.fallback_gdn_recurrent(*a, False))
            self._pending.append((q, k, y, decay, beta, state, windows, conv))
        else:
            self._dispatch("gdn", "gdn_m16", core, (5, 7), torch.ops.netra.gdn_m16, lambda *a: ops.fallback_gdn_recurrent(*a, True))
        g = self._norm("gated", o.view(R, -1), None, L["gdn_norm"], torch.empty(z.shape, dtype=z.dtype, device=z.device), gate=z)
        return L["gdn_out"](g)[0]

    def _moe(self, L, h):
        R = h.shape[0]
        d = h.device
        ids = torch.empty(R, 9, dtype=torch.int32, device=d)
        rw = torch.empty(R, 9, dtype=torch.float32, device=d)
        gu = torch.empty(9 * R, 1024, dtype=torch.bfloat16, device=d)
        act = torch.empty(9 * R, 512, dtype=E4M3, device=d)
        act_s = torch.empty(9 * R, 4, dtype=torch.float32, device=d)
        out = torch.empty(R, self.cfg.hidden, dtype=torch.bfloat16, device=d)
        args = (h, L["router"], L["shared_gate"], L["w13"], L["s13"], L["w2"], L["s2"], ids, rw, gu, act, act_s, out)
        self._dispatch("moe", "moe_block", args, (7, 8, 9, 10, 11, 12), lambda *a: torch.ops.netra.moe_block(*a, False), ops.fallback_moe_block)
        if self.keep is not None:
            self.keep.append(ids)
        return out

    def __call__(self, b: Batch):
        """One step of bucket `b`: returns (logits FP32 [R, vocab], tokens int64 [R]); verify also
        commits each request's accepted prefix (b.accepted) through the GDN replay. With self.trace a
        list (eager), each layer appends copies of (layer, what, tensor) for what in: its mixer's
        output ("attention" or "gdn"), the add + RMSNorm after it ("norm"), the MoE output ("moe")
        and the residual stream after the layer ("residual"); then (layers, "logits", logits)."""
        cfg = self.cfg
        self._pending, self._batch, self._layer = [], b, 0
        self._rope_cs = self.cos[b.positions].view(-1, 1, self.cfg.rotary_dim), self.sin[b.positions].view(-1, 1, self.cfg.rotary_dim)
        residual = self.w.embed[b.tokens]
        h = self._norm("rms", residual, None, self.w.layers[0]["input_norm"], torch.empty_like(residual))
        for i, L in enumerate(self.w.layers):
            self._layer = i
            mix = self._attention(i, L, h, b) if L["kind"] == "attention" else self._gdn(i, L, h, b)
            h = self._norm("add", mix, residual, L["post_norm"], torch.empty_like(mix))
            m = self._moe(L, h)
            if self.trace is not None:
                self.trace += [(i, L["kind"], mix.clone()), (i, "norm", h.clone()), (i, "moe", m.clone())]
            nxt = self.w.layers[i + 1]["input_norm"] if i + 1 < cfg.layers else self.w.final_norm
            h = self._norm("add", m, residual, nxt, torch.empty_like(m))
            if self.trace is not None:
                self.trace.append((i, "residual", residual.clone()))
        logits = lm_head(h, self.w.lm_head)
        if self.trace is not None:
            self.trace.append((cfg.layers, "logits", logits.clone()))
        tokens = torch.empty(logits.shape[0], dtype=torch.int64, device=logits.device)
        self._layer = cfg.layers
        self._dispatch("argmax", "argmax", (logits, tokens), (1,), torch.ops.netra.argmax, ops.fallback_argmax)
        gdn_layers = [i for i, kind in enumerate(cfg.layer_kinds()) if kind == "gdn"]
        for layer, (q, k, y, decay, beta, state, windows, conv) in zip(gdn_layers, self._pending):
            self._layer = layer
            self._dispatch("gdn", "gdn_replay", (q, k, y, decay, beta, state, b.gdn_slots, b.accepted, windows, conv), (5, 9),
                           torch.ops.netra.gdn_replay, ops.fallback_gdn_replay)
            if self.keep is not None:
                self.keep.append((q, k, y, decay, beta, windows))
        self._pending = []
        return logits, tokens


def prefix(weights: Weights, pools: Pools, layers: int):
    """The first `layers` layers of a model and its pools, sharing their tensors (the teacher-forced
    oracle of every bucket runs on such a prefix; restoring the full pools restores it)."""
    w, p = copy.copy(weights), copy.copy(pools)
    w.cfg = p.cfg = dataclasses.replace(weights.cfg, layers=layers)
    w.layers = weights.layers[:layers]
    p.kv, p.state, p.conv = pools.kv[:layers], pools.state[:layers], pools.conv[:layers]
    return w, p


def capture(step: Step, batch: Batch, warmup=1):
    """A CUDA graph of one step of `batch` (warm-up calls on a side stream first, as torch's
    capture rules ask); returns (graph, static logits, static tokens, graph-pool bytes)."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(warmup):
            step(batch)
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    torch.cuda.empty_cache()  # torch.cuda.graph empties the cache as capture begins: measure from the same state
    before = torch.cuda.memory_reserved()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        logits, tokens = step(batch)
    torch.cuda.synchronize()
    return graph, logits, tokens, torch.cuda.memory_reserved() - before


# ---- divergence between two runs of the same step --------------------------------------------------

def trace_divergence(trace, ref_trace, rows):
    """[{layer, what, rel_l2}] of two Step.trace lists of the same bucket (live `rows` only): the
    relative L2 distance of each traced tensor from the reference's."""
    out = []
    for (layer, what, x), (ref_layer, ref_what, y) in zip(trace, ref_trace):
        if (layer, what) != (ref_layer, ref_what):
            raise ValueError(f"traces of different steps: {(layer, what)} vs {(ref_layer, ref_what)}")
        a, b = x[:rows].double(), y[:rows].double()
        out.append({"layer": layer, "what": what, "rel_l2": float((a - b).norm() / b.norm().clamp_min(1e-300))})
    return out


def route_flips(keep, ref_keep, rows, top_k):
    """Per MoE layer, the fraction of live rows whose routed expert set (the top_k, ignoring order)
    differs between two runs' Step.keep lists."""
    ids = [t for t in keep if isinstance(t, torch.Tensor)]
    ref_ids = [t for t in ref_keep if isinstance(t, torch.Tensor)]
    out = []
    for a, b in zip(ids, ref_ids):
        sa, _ = a[:rows, :top_k].sort(dim=1)
        sb, _ = b[:rows, :top_k].sort(dim=1)
        out.append(float((sa != sb).any(dim=1).float().mean()))
    return out
