"""The step's framework glue as Triton kernels (the step's own code, not netra ops): between the
attention layer's QKV GEMM and netra's attention, the q/k head RMSNorms, partial RoPE, the E4M3 KV
append of k and v into the pools at the batch's slots (about 25 torch kernels at one token, one
here); after it, the output gate o * sigmoid(gate) (two torch kernels, one here); and the FP8 dense
path's per-1x128 activation quantization with its zero-row padding (six torch kernels, one here).

Same math as the torch glue in netra.step.model (FP32, each step rounded as there: the head norm
to BF16, then RoPE to BF16, codes e4m3(x / scale) saturating at +-448 with NaN kept), not bitwise
it (the sum of squares, rsqrt, exp and the RoPE products round differently). select() runs both
on the real shapes before use and keeps the fused glue only when it agrees (q within 2^-6 of its
head's max; codes within one E4M3 step; every other pool slot untouched; activation scales within
2^-22), else the torch glue;
its verdict is recorded. Both paths of the step (netra's, the torch reference) use the selected
glue, so the teacher-forced oracle's inputs are unaffected.

Mapping: attn_pre grid (rows, q heads + 2 k heads + 2 v heads), one program per (row, head) of
256 values, 2 warps; gate_mul grid (rows, 4096 / 1024); quant grid (padded rows, K / 128), one
program per 128-value group, 1 warp.
"""

import torch

_choice = {"fused": False, "why": "not selected"}
_kernels = {}


def fused() -> bool:
    return _choice["fused"]


def choice() -> dict:
    return dict(_choice)


try:  # the kernels are module-level functions: Triton resolves the names they use in the module's globals
    import triton
    import triton.language as tl
except ImportError:  # no Triton: select() keeps the torch glue
    triton = tl = None

if triton is not None:
    @triton.jit
    def _attn_pre(qk, qk_row, v, v_row, w, cos, sin, q_out, kb, vb, slots, k_scale, v_scale, eps,
                 QH: tl.constexpr, KH: tl.constexpr, D: tl.constexpr, RD: tl.constexpr):
        r = tl.program_id(0)
        h = tl.program_id(1)
        i = tl.arange(0, D)
        slot = tl.load(slots + r).to(tl.int64)
        if h < QH + KH:
            base = qk + r * qk_row + h * D
            x = tl.load(base + i).to(tl.float32)
            rs = tl.math.rsqrt(tl.sum(x * x, axis=0) / D + eps)
            y = (x * rs * tl.load(w + h * D + i)).to(tl.bfloat16).to(tl.float32)
            rot_part = i < RD
            p = tl.where(i < RD // 2, i + RD // 2, i - RD // 2)
            yp = (tl.load(base + p, mask=rot_part, other=0.0).to(tl.float32) * rs
                  * tl.load(w + h * D + p, mask=rot_part, other=0.0)).to(tl.bfloat16).to(tl.float32)
            rot = tl.where(i < RD // 2, -yp, yp)
            c = tl.load(cos + r * RD + i, mask=rot_part, other=1.0)
            s = tl.load(sin + r * RD + i, mask=rot_part, other=0.0)
            out = tl.where(rot_part, y * c + rot * s, y).to(tl.bfloat16)
            if h < QH:
                tl.store(q_out + (r * QH + h) * D + i, out)
            else:
                t = out.to(tl.float32)
                t = tl.math.div_rn(t, tl.zeros_like(t) + tl.load(k_scale))  # IEEE division, as torch's
                t = tl.where(t > 448.0, 448.0, tl.where(t < -448.0, -448.0, t))  # NaN stays NaN
                tl.store(kb + (slot * KH + (h - QH)) * D + i, t.to(tl.float8e4nv).to(tl.uint8, bitcast=True))
        else:
            x = tl.load(v + r * v_row + (h - QH - KH) * D + i).to(tl.float32)
            t = tl.math.div_rn(x, tl.zeros_like(x) + tl.load(v_scale))
            t = tl.where(t > 448.0, 448.0, tl.where(t < -448.0, -448.0, t))
            tl.store(vb + (slot * KH + (h - QH - KH)) * D + i, t.to(tl.float8e4nv).to(tl.uint8, bitcast=True))

    @triton.jit
    def _gate_mul(o, gate, g_row, out, N: tl.constexpr, BLOCK: tl.constexpr):
        r = tl.program_id(0)
        c = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
        g = tl.load(gate + r * g_row + c).to(tl.float32)
        sg = (1.0 / (1.0 + tl.exp(-g))).to(tl.bfloat16).to(tl.float32)
        tl.store(out + r * N + c, (tl.load(o + r * N + c).to(tl.float32) * sg).to(tl.bfloat16))

    @triton.jit
    def _quant(x, x_row, q, s, M, M_PAD, K: tl.constexpr):
        r = tl.program_id(0)
        g = tl.program_id(1)
        i = g * 128 + tl.arange(0, 128)
        v = tl.load(x + r * x_row + i, mask=(tl.zeros_like(i) + r) < M, other=0.0).to(tl.float32)
        scale = tl.maximum(tl.max(tl.abs(v), axis=0), 7.888609052210118e-31) * 0.002232142857142857  # max(amax, 2^-100) * (1 / 448)
        t = tl.math.div_rn(v, tl.zeros_like(v) + scale)
        tl.store(q + r * K + i, t.to(tl.float8e4nv))
        tl.store(s + g * M_PAD + r, scale)


def _build():
    if triton is None:
        raise RuntimeError("Triton is not installed")
    _kernels.update(attn_pre=_attn_pre, gate_mul=_gate_mul, quant=_quant)


def attn_pre(qk, v, w1, cos, sin, q_out, kb, vb, slots, k_scale, v_scale, eps):
    """qk [R, QH + KH, D] (a column view: rows strided, heads contiguous), v [R, KH, D] likewise,
    w1 [QH + KH, D] FP32 (1 + w), cos / sin [R, RD] FP32 (as [R, 1, RD] views are fine): writes
    q_out [R, QH, D] BF16 and the k / v codes at the pools' rows slots[r]."""
    R, H, D = qk.shape
    KH = v.shape[1]
    _kernels["attn_pre"][(R, H + KH)](qk, qk.stride(0), v, v.stride(0), w1, cos, sin, q_out, kb, vb, slots, k_scale, v_scale, eps,
                                      QH=H - KH, KH=KH, D=D, RD=cos.shape[-1], num_warps=2)


def gate_mul(o, gate):
    """o [R, heads, D] BF16 (contiguous) * sigmoid(gate) (gate [R, heads, D], rows strided) -> [R, heads * D]."""
    R = o.shape[0]
    n = o[0].numel()
    out = torch.empty(R, n, dtype=torch.bfloat16, device=o.device)
    _kernels["gate_mul"][(R, n // 1024)](o, gate, gate.stride(0), out, N=n, BLOCK=1024, num_warps=4)
    return out


def quantize(x, rows):
    """x [M, K] BF16 (rows contiguous) -> (E4M3 codes [rows, K], FP32 scales [rows, K / 128] column-
    major), rows >= M, the rows past M zero; per 1 x 128: scale = max(amax, 2^-100) / 448 (times the
    rounded 1/448), codes e4m3(x / scale) (IEEE division, RNE): model.quantize_tokens in one kernel."""
    m, k = x.shape
    q = torch.empty(rows, k, dtype=torch.float8_e4m3fn, device=x.device)
    scales = torch.empty(k // 128, rows, dtype=torch.float32, device=x.device)
    _kernels["quant"][(rows, k // 128)](x, x.stride(0), q, scales, m, rows, K=k, num_warps=1)
    return q, scales.t()


def select(device, torch_glue, torch_quant, rows=(1, 5, 64)) -> dict:
    """Builds the kernels and compares them with the torch glue (netra.step.model's): `torch_glue`
    (qk, v, w1, cos, sin, kb, vb, slots, ks, vs, eps, o, gate) -> (q, gated) on random inputs of the
    step's shapes at each row count, `torch_quant` (x padded to `rows`) -> (codes, scales) at 1 and
    48 rows of 2048 and 4096; keeps the fused glue only if every check holds."""
    global _choice
    _choice = {"fused": False, "why": "not selected"}
    try:
        _build()
        checks = [_check(device, torch_glue, r) for r in rows] + [_check_quant(device, torch_quant, m, k) for m in (1, 48) for k in (2048, 4096)]
        bad = [c for c in checks if not c["ok"]]
        _choice = {"fused": not bad, "why": "fused glue agrees with the torch glue" if not bad else f"fused glue disagrees: {bad[0]}",
                   "checks": checks}
    except Exception as e:  # no Triton, a compile error, ...: the torch glue
        _choice = {"fused": False, "why": f"{type(e).__name__}: {str(e)[:500]}"}
    return dict(_choice)


def _check(device, torch_glue, R, QH=16, KH=2, D=256, RD=64, slots_total=300):
    g = torch.Generator(device=device).manual_seed(R)
    prod = torch.randn(R, QH * D + KH * D + QH * D + KH * D, device=device, generator=g).to(torch.bfloat16)
    qk = prod[:, :(QH + KH) * D].view(R, QH + KH, D)
    gate = prod[:, (QH + KH) * D:(2 * QH + KH) * D].view(R, QH, D)
    v = prod[:, (2 * QH + KH) * D:].view(R, KH, D)
    w1 = 1.0 + 0.1 * torch.randn(QH + KH, D, device=device, generator=g)
    ang = torch.rand(R, RD, device=device, generator=g) * 6.3
    cos, sin = ang.cos(), ang.sin()
    scales = torch.tensor([0.45, 0.55], device=device)
    ks, vs = scales[0:1], scales[1:2]  # as the pools hold them
    slots = torch.randperm(slots_total, device=device, generator=g)[:R]
    o = torch.randn(R, QH, D, device=device, generator=g).to(torch.bfloat16)
    before = [torch.randint(0, 255, (slots_total, KH, D), device=device, generator=g, dtype=torch.uint8) for _ in range(2)]
    (kb_t, vb_t), (kb_f, vb_f) = [t.clone() for t in before], [t.clone() for t in before]
    q_t, gated_t = torch_glue(qk, v, w1, cos.view(R, 1, RD), sin.view(R, 1, RD), kb_t, vb_t, slots, ks, vs, 1e-6, o, gate)
    q_f = torch.empty(R, QH, D, dtype=torch.bfloat16, device=device)
    attn_pre(qk, v, w1, cos.view(R, 1, RD), sin.view(R, 1, RD), q_f, kb_f, vb_f, slots, ks, vs, 1e-6)
    gated_f = gate_mul(o, gate)
    torch.cuda.synchronize()
    e4m3 = torch.float8_e4m3fn
    q_err = float(((q_f.float() - q_t.float()).abs() / q_t.float().abs().amax(-1, keepdim=True).clamp_min(1e-30)).max())
    codes = []
    for f, t in ((kb_f, kb_t), (vb_f, vb_t)):
        a, b = f[slots].view(e4m3).float(), t[slots].view(e4m3).float()
        codes.append(float(((a - b).abs() / (2.0 ** -3 * torch.maximum(a.abs(), b.abs()) + 2.0 ** -9).clamp_min(1e-30)).max()))
    others = torch.ones(slots_total, dtype=torch.bool, device=device)
    others[slots] = False
    untouched = all(torch.equal(f[others], b[others]) for f, b in ((kb_f, before[0]), (vb_f, before[1])))
    g_err = float(((gated_f.float() - gated_t.view(R, -1).float()).abs() / (2.0 ** -7 * gated_t.view(R, -1).float().abs() + 2.0 ** -30)).max())
    ok = q_err <= 2.0 ** -6 and max(codes) <= 1.0 and untouched and g_err <= 2.0
    return {"rows": R, "q_err_rel_head_max": q_err, "codes_err_in_e4m3_steps": codes, "other_slots_untouched": untouched,
            "gate_err_in_bf16_steps": g_err, "ok": ok}


def _check_quant(device, torch_quant, m, k):
    g = torch.Generator(device=device).manual_seed(m + k)
    x = (torch.randn(m, k, device=device, generator=g) * torch.rand(m, k // 128, 1, device=device, generator=g).view(m, k // 128, 1)
         .expand(m, k // 128, 128).reshape(m, k) * 4).to(torch.bfloat16)
    rows = max(m, 16)
    qf, sf = quantize(x, rows)
    qt, st = torch_quant(x, rows)
    torch.cuda.synchronize()
    a, b = qf.float(), qt.float()
    codes = float(((a - b).abs() / (2.0 ** -3 * torch.maximum(a.abs(), b.abs()) + 2.0 ** -9)).max())
    s_err = float(((sf - st).abs() / st.abs()).max())
    layout = sf.stride() == (1, rows)
    return {"quant_rows": m, "k": k, "codes_err_in_e4m3_steps": codes, "codes_bitwise_mismatches": int((qf.view(torch.uint8) != qt.view(torch.uint8)).sum()),
            "scale_rel_err": s_err, "column_major": layout, "ok": codes <= 1.0 and s_err <= 2.0 ** -22 and layout}
