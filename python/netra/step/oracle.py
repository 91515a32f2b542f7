"""The step's oracle under teacher forcing: the torch reference path runs the step, and at every op
netra's custom op runs on copies of exactly the reference's inputs (Step.forcing); each netra
output is checked against that op's own derived bound (netra.step.plan.BOUNDS, derivations in
docs/step.md). A local error measured this way is free of compounding: nothing netra computed
upstream reaches the op.

check(op, before, netra, ref, ctx) returns {"op", "checks": {name: {measured, bound, ok, ...}},
"rel_l2_vs_torch", "ok"}: `before` are the op's arguments as both implementations saw them (the
mutated ones copied before either ran), `netra` the arguments after netra's op (its outputs in the
mutated ones), `ref` after the torch implementation; ctx has the live rows, the batch's T and
accepted lengths, and what each op needs besides its arguments.
"""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from netra.moe_experts import quantize_hidden, to_e4m3
from netra.step import plan

E4M3 = torch.float8_e4m3fn


def f64(t):
    """t in float64 (E4M3 through float32)."""
    return t.float().double() if t.dtype in (E4M3, torch.float8_e4m3fnuz) else t.double()


def _rel_l2(a, b):
    a, b = a.double(), b.double()
    return float((a - b).norm() / b.norm().clamp_min(1e-300))


def _bitwise(a, b):
    """(mismatching elements, total) of two tensors compared as bytes (NaN payloads included)."""
    if a.dtype.is_floating_point:
        a, b = a.contiguous().view(torch.uint8), b.contiguous().view(torch.uint8)
    return int((a != b).sum()), a.numel()


def bitwise_check(a, b):
    bad, n = _bitwise(a, b)
    return {"measured": bad, "bound": 0, "elements": n, "ok": bad == 0}


def ulp_bf16(x):
    """The BF16 spacing at |x| (2^(e - 7), e = floor(log2 |x|); the smallest normal's below it)."""
    e = torch.floor(torch.log2(x.abs().double().clamp_min(2.0 ** -126)))
    return torch.exp2(e - 7)


def bounded(got, want, bound, what=""):
    """Elementwise |got - want| <= bound; NaN must sit where the other side has NaN. measured: the
    worst |err| / bound (<= 1 passes)."""
    g, w = got.double(), want.double()
    nan_g, nan_w = torch.isnan(g), torch.isnan(w)
    nan_mismatch = int((nan_g != nan_w).sum())
    fin = ~(nan_g | nan_w)
    err = (g - w).abs()[fin]
    bnd = bound.double().expand_as(g)[fin] if torch.is_tensor(bound) else torch.full_like(err, float(bound))
    ratio = float((err / bnd.clamp_min(1e-300)).max()) if err.numel() else 0.0
    beyond = int((err > bnd).sum()) + nan_mismatch
    return {"measured": ratio, "bound": 1.0, "beyond": beyond, "elements": g.numel(), "differing": int((g != w)[fin].sum()),
            "ok": beyond == 0, **({"what": what} if what else {})}


def one_bf16_step(got, want, slack=0.0):
    """The norm / conv policy: two BF16 roundings of FP32 values within `slack` of each other are at
    most one BF16 spacing (at the larger magnitude) apart, plus the slack."""
    return bounded(got, want, ulp_bf16(torch.maximum(got.double().abs(), want.double().abs())) + slack)


def gamma(n):
    return plan.gamma(n)


# ---- per family ------------------------------------------------------------------------------------

def _norm(op, before, netra, ref, ctx):
    # args: rms (x, w, out, eps, zc); add (x, residual, w, out, eps, zc); gated (o, z, w, out, eps)
    rows = ctx["rows"]
    out = {"rms_norm": 2, "add_rms_norm": 3, "gated_rms_norm": 3}[op]
    checks = {"out": one_bf16_step(netra[out][:rows], ref[out][:rows])}
    if op == "add_rms_norm":
        checks["residual"] = bitwise_check(netra[1][:rows], ref[1][:rows])
    return checks, _rel_l2(netra[out][:rows], ref[out][:rows])


def attention_fp64(q, k_buffer, v_buffer, kv_table, kv_lens, k_scale, v_scale, T, rows):
    """FP64 softmax attention of the dequantized E4M3 cache (score = q . k_code * k_scale / 16, the
    contract's scaling for head dim 256) and the contract's bound per output
    (contracts/attention/gqa8_paged.hpp; tests/oracles/attention_gqa8.hpp is the same formula)."""
    B = rows // T
    L = kv_table.shape[1]
    k = f64(k_buffer.view(E4M3)[kv_table[:B]])  # codes [B, L, 2, 256]
    v = f64(v_buffer.view(E4M3)[kv_table[:B]]) * float(v_scale)
    qq = q[:rows].double().view(B, T, 2, 8, 256)
    ss = float(k_scale) / 16.0
    dot = torch.einsum("btgjd,blgd->bgjtl", qq, k)
    absdot = torch.einsum("btgjd,blgd->bgjtl", qq.abs(), k.abs())
    t = torch.arange(T, device=q.device).view(1, T, 1)
    vis = torch.arange(L, device=q.device).view(1, 1, L) < (kv_lens[:B].long().view(B, 1, 1) - T + t + 1)  # [B, T, L]
    visb = vis[:, None, None]
    s = (dot * ss).masked_fill(~visb, float("-inf"))
    delta = (ss * absdot * 2.0 ** -15 + (dot * ss).abs() * 2.0 ** -24).masked_fill(~visb, 0).amax(-1)  # [B, 2, 8, T]
    w = torch.softmax(s, dim=-1)
    o = torch.einsum("bgjtl,blgd->btgjd", w, v)  # [B, T, 2, 8, 256]
    vinf = (v.abs()[:, None] * vis[..., None, None]).amax(2)  # [B, T, 2, 256]
    u = 2.0 ** -9 + 2.0 ** -22
    rho = torch.exp(2 * delta) * (1 + u) / (1 - u) - 1  # [B, 2, 8, T]
    length = kv_lens[:B].double().view(B, 1, 1, 1, 1)
    bound = o.abs() * 2.0 ** -8 + vinf[:, :, :, None, :] * (rho.permute(0, 3, 1, 2)[..., None] + (length / 4 + 256) * 2.0 ** -24 + 2.0 ** -20)
    return o.reshape(rows, 16, 256), bound.reshape(rows, 16, 256)


def _attention(op, before, netra, ref, ctx):
    q, kb, vb, _, _, _, ks, vs, out = before[:9]
    table, lens = before[14], before[15]
    rows, T = ctx["rows"], ctx["T"]
    o64, bound = attention_fp64(q, kb, vb, table, lens, ks, vs, T, rows)
    return {"out": bounded(netra[8][:rows], o64, bound, "vs FP64, the contract's bound")}, _rel_l2(netra[8][:rows], ref[8][:rows])


def _conv_slack(x, weight, hist):
    """2 * 1.1 * gamma_5 * sum |w x| per output (the 4-tap FP32 sum in either order, through SiLU,
    |silu'| < 1.1) + 2^-20 |.|: the FP32 difference between netra's and torch's conv before BF16."""
    B = hist.shape[0]
    T = x.shape[0] // B
    xs = torch.cat([hist.double().transpose(1, 2), x.double().view(B, T, -1)], dim=1).abs()
    w = weight.double().abs()
    env = sum(w[:, j] * xs[:, j:j + T] for j in range(4)).view(B * T, -1)
    return 2 * 1.1 * gamma(5) * env


def _gdn_conv(op, before, netra, ref, ctx):
    x, w, y, slots, state, windows = before
    rows, B = ctx["rows"], ctx["live"]
    idx = slots.long().clamp(0, state.shape[0] - 1)
    hist = state[idx] if state.shape[1] == x.shape[1] else state[idx].transpose(1, 2)
    slack = _conv_slack(x, w, hist)[:rows]
    yr = ref[2][:rows]
    checks = {"y": one_bf16_step(netra[2][:rows], yr, slack + 2.0 ** -20 * yr.double().abs())}
    if windows is None:
        checks["conv_state"] = bitwise_check(netra[4], ref[4])  # every slot: live ones shift, the rest stay
    else:
        checks["windows"] = bitwise_check(netra[5][:B], ref[5][:B])
        checks["conv_state_untouched"] = bitwise_check(netra[4], before[4])
    return checks, _rel_l2(netra[2][:rows], yr)


def _gdn_precompute(op, before, netra, ref, ctx):
    y, a, b, a_log, dt_bias = before[:5]
    rows = ctx["rows"]
    x = (a[:rows].double() + dt_bias.double()).abs()
    g = (torch.exp(a_log.double()) * F.softplus(a[:rows].double() + dt_bias.double())).abs()
    checks = {}
    for i, name in ((5, "q"), (6, "k")):
        r = ref[i][:rows].double()
        checks[name] = bounded(netra[i][:rows], r, plan.BOUNDS["gdn_precompute"]["qk_rel"] * r.abs() + 2.0 ** -126)
    d = ref[7][:rows].double()
    checks["decay"] = bounded(netra[7][:rows], d, plan.decay_bound_rel(g, x) * d.abs() + 2.0 ** -126)
    bt = ref[8][:rows].double()
    checks["beta"] = bounded(netra[8][:rows], bt, plan.BOUNDS["gdn_precompute"]["beta_rel"] * bt.abs() + 2.0 ** -126)
    return checks, _rel_l2(torch.cat([netra[i][:rows].flatten() for i in (5, 6, 7, 8)]), torch.cat([ref[i][:rows].flatten() for i in (5, 6, 7, 8)]))


def recurrent_envelope(q, k, y, decay, beta, state, T, accepted=None):
    """The gated delta rule evaluated on magnitudes (each subtraction an addition, inputs |.|,
    FP64): E_out [B T, 32, 128] and E_state [B, 32, 128, 128] after the first `accepted` tokens.
    Any evaluation order of the rule in FP32 is within gamma_m * E of the exact value, m the
    roundings on the longest path (plan.gdn_roundings)."""
    B = state.shape[0]
    S = state.double().abs()
    qh = q.double().abs().view(B, T, 16, 128).repeat_interleave(2, dim=2)
    kh = k.double().abs().view(B, T, 16, 128).repeat_interleave(2, dim=2)
    v = y[:, 4096:].double().abs().view(B, T, 32, 128)
    a, bt = decay.double().abs().view(B, T, 32), beta.double().abs().view(B, T, 32)
    outs = []
    for t in range(T):
        Sn = S * a[:, t, :, None, None]
        u = bt[:, t, :, None] * (v[:, t] + (Sn @ kh[:, t, :, :, None]).squeeze(-1))
        Sn = Sn + u[..., None] * kh[:, t, :, None, :]
        outs.append((Sn @ qh[:, t, :, :, None]).squeeze(-1))
        S = Sn if accepted is None else torch.where((accepted[:B] > t)[:, None, None, None], Sn, S)
    return torch.stack(outs, dim=1).view(B * T, 32, 128), S


def _gdn_core(op, before, netra, ref, ctx):
    # verify / m16: (q, k, v, decay, beta, state, slots, out); replay: (q, k, v, decay, beta, state, slots, accepted, windows, conv_state)
    q, k, v, decay, beta, state, slots = before[:7]
    B, T, rows = ctx["live"], ctx["T"], ctx["rows"]
    idx = slots[:B].long()
    accepted = before[7] if op == "gdn_replay" else None
    e_out, e_state = recurrent_envelope(q[:rows], k[:rows], v[:rows], decay[:rows], beta[:rows], state[idx], T, accepted)
    checks = {}
    rel = None
    if op != "gdn_replay":
        o_n, o_r = netra[7][:rows], ref[7][:rows]
        slack = 2 * gamma(plan.gdn_roundings(T, "out")) * e_out
        checks["out"] = one_bf16_step(o_n, o_r, slack)
        rel = _rel_l2(o_n, o_r)
    if op == "gdn_verify":
        checks["state_untouched"] = bitwise_check(netra[5], before[5])
        return checks, rel
    s_n, s_r = netra[5][idx], ref[5][idx]
    checks["state"] = bounded(s_n, s_r, 2 * gamma(plan.gdn_roundings(T, "state")) * e_state, "live slots")
    others = torch.ones(state.shape[0], dtype=torch.bool, device=state.device)
    others[idx] = False
    checks["other_slots_untouched"] = bitwise_check(netra[5][others], before[5][others])
    if op == "gdn_replay":
        checks["conv_state"] = bitwise_check(netra[9], ref[9])
    return checks, rel if rel is not None else _rel_l2(s_n, s_r)


def _logits64(h, w):
    return h.double() @ w.double().t()


def _route_checks(h, router, shared, ids, rw, ref_ids, tokens):  # tokens: the call's (the exact router up to 16)
    """Routes: netra's top-8 admissible against the FP64 logits (every chosen expert's logit at
    least every unchosen one's minus 2 delta, delta netra's logit bound), route weights within their
    bound of the FP64 renormalized softmax over netra's set, slot 8 the shared expert with
    sigmoid(h . g) within its bound; the flip rate against the torch path's routes."""
    B = plan.BOUNDS["moe_block"]
    l64 = _logits64(h, router)  # [R, 256]
    env = h.double().abs() @ router.double().abs().t()
    delta = (B["router_exact_rel"] if tokens <= 16 else B["router_matrix_rel"]) * env.amax(-1)  # [R]
    top = ids[:, :8].long()
    chosen = torch.zeros_like(l64, dtype=torch.bool).scatter_(1, top, torch.ones_like(top, dtype=torch.bool))
    lo = l64.masked_fill(~chosen, float("inf")).amin(-1)
    hi = l64.masked_fill(chosen, float("-inf")).amax(-1)
    slack = hi - lo  # > 0: an unchosen expert's FP64 logit above a chosen one's
    admissible = {"measured": float((slack / (2 * delta)).max()), "bound": 1.0, "beyond": int((slack > 2 * delta).sum()),
                  "elements": int(l64.shape[0]), "ok": bool((slack <= 2 * delta).all())}
    sel = l64.gather(1, top)
    w64 = torch.softmax(sel, dim=-1)
    wb = (torch.exp(4 * delta) - 1 + 2.0 ** -19).view(-1, 1) * w64
    weights = bounded(rw[:, :8], w64, wb, "vs FP64 softmax over netra's set")
    g64 = h.double() @ shared.double()
    genv = h.double().abs() @ shared.double().abs()
    s64 = torch.sigmoid(g64)
    gate = bounded(rw[:, 8], s64, 0.25 * B["router_exact_rel"] * genv + 2.0 ** -22 + 2.0 ** -20 * s64, "shared gate vs FP64")
    gate["ok"] = gate["ok"] and bool((ids[:, 8] == 256).all())
    sa, _ = ids[:, :8].sort(dim=1)
    sb, _ = ref_ids[:, :8].sort(dim=1)
    flips = (sa != sb).any(dim=1)
    return {"routes_admissible": admissible, "route_weights": weights, "shared_gate": gate}, flips


def _routes64(x, ids, wq, ws, chunk=64):
    """Each route's row of x [9R, in] through its expert's dequantized weights (E4M3 wq [experts,
    out, in] times float32 128 x 128 block scales ws), in FP64, and the same on magnitudes:
    ([9R, out], [9R, out]); `chunk` routes at a time (a chunk's weights are 64 x out x in doubles)."""
    e = ids.reshape(-1).long()
    o, i = wq.shape[1], wq.shape[2]
    out, env = [], []
    for c in range(0, e.numel(), chunk):
        ee = e[c:c + chunk]
        w = (f64(wq[ee]).view(-1, o // 128, 128, i // 128, 128) * ws[ee].double().view(-1, o // 128, 1, i // 128, 1)).view(-1, o, i)
        xx = x[c:c + chunk, :, None]
        out.append(torch.bmm(w, xx).squeeze(-1))
        env.append(torch.bmm(w.abs(), xx.abs()).squeeze(-1))
        del w
    return torch.cat(out), torch.cat(env)


def _gate_up64(hidden, ids, w13, s13):
    """FP64 gate_up of the contract's quantized hidden through each route's expert, and E = the
    same on magnitudes; [9R, 1024] each."""
    q, sx = quantize_hidden(hidden)
    m = hidden.shape[0]
    x = (f64(q).view(m, 16, 128) * sx.double().view(m, 16, 1)).view(m, 2048).repeat_interleave(9, dim=0)
    return _routes64(x, ids, w13, s13)


def act_quant_ref(gate_up):
    """The act_quant contract in torch on given BF16 gate_up rows: y = bf16(silu(g) u) (torch's
    SiLU: its exp is not netra's, so y can sit one BF16 step away), scale = amax / 448 and
    q = e4m3(y / scale), both IEEE divisions (tensor by tensor)."""
    g, u = gate_up.float().split(512, dim=1)
    y = (F.silu(g) * u).to(torch.bfloat16).float().view(-1, 4, 128)
    amax = y.abs().amax(-1, keepdim=True)
    scale = torch.div(amax, torch.full_like(amax, 448.0))
    q = to_e4m3(torch.div(y, torch.where(amax == 0, torch.ones_like(scale), scale)))
    return q.view(-1, 512), scale.view(-1, 4)


def _down64(act, scales, ids, weights, w2, s2):
    """FP64 down of netra's act codes through each route's expert, weighted and summed: (ref, E, W)."""
    m = ids.shape[0]
    ys, env = _routes64((f64(act).view(-1, 4, 128) * scales.double().view(-1, 4, 1)).view(-1, 512), ids, w2, s2)
    rw = weights.double().view(m, 9, 1)
    return (ys.view(m, 9, -1) * rw).sum(1), (env.view(m, 9, -1) * rw.abs()).sum(1), rw.abs().sum(1)


def _moe(op, before, netra, ref, ctx):
    h, router, shared, w13, s13, w2, s2 = before[:7]
    rows = ctx["rows"]
    ids, rw, out = netra[7][:rows], netra[8][:rows], netra[12][:rows]
    gu, act, act_s = netra[9][:9 * rows], netra[10][:9 * rows], netra[11][:9 * rows]
    hh = h[:rows]
    B = plan.BOUNDS["moe_block"]
    checks, flips = _route_checks(hh, router, shared, ids, rw, ref[7][:rows], h.shape[0])
    g64, genv = _gate_up64(hh, ids, w13, s13)
    checks["gate_up"] = bounded(gu, g64, 2.0 ** -8 * g64.abs() + B["gemm_env"] * genv + 2.0 ** -120, "vs FP64, the expert policy")
    qa, sa = act_quant_ref(gu)
    code_flips = act.view(torch.uint8) != qa.view(torch.uint8)
    dn, dr = f64(act).view(-1, 4, 128) * act_s.double().view(-1, 4, 1), f64(qa).view(-1, 4, 128) * sa.double().view(-1, 4, 1)
    s_max = torch.maximum(act_s.double(), sa.double()).view(-1, 4, 1)
    checks["act_codes"] = bounded(dn, dr, B["act_rel"] * torch.maximum(dn.abs(), dr.abs()) + 2.0 ** -9 * s_max,
                                  "dequantized act vs act_quant on netra's gate_up")
    checks["act_scales"] = bounded(act_s, sa, 2.0 ** -7 * torch.maximum(act_s.double().abs(), sa.double().abs()), "one BF16 step of amax")
    y64, E, W = _down64(act, act_s, ids, rw, w2, s2)
    env = B["down_env_decode"] if h.shape[0] <= 16 else B["down_env_grouped"]  # the tactic follows the call's token count
    checks["out"] = bounded(out, y64, 2.0 ** -8 * y64.abs() + env * E + 2.0 ** -23 * W + 2.0 ** -120, "vs FP64 of netra's act and routes")
    same = ~flips
    ref_codes = ref[10][:9 * rows].view(torch.uint8).view(rows, 9, 512)
    code_vs_ref = (act.view(torch.uint8).view(rows, 9, 512) != ref_codes)[same]
    rates = {"route_flip_rate": float(flips.float().mean()), "route_flips": int(flips.sum()), "rows": rows,
             "code_flip_rate_act_quant": float(code_flips.float().mean()),
             "code_flip_rate_vs_torch_path": float(code_vs_ref.float().mean()) if code_vs_ref.numel() else None,
             "scale_flip_rate": float((act_s != sa).float().mean())}
    return checks, _rel_l2(out, ref[12][:rows]), rates


def _argmax(op, before, netra, ref, ctx):
    return {"tokens": bitwise_check(netra[1], torch.argmax(before[0], dim=-1))}, None


_CHECKS = {"rms_norm": _norm, "add_rms_norm": _norm, "gated_rms_norm": _norm, "attention_gqa8": _attention, "gdn_conv": _gdn_conv,
           "gdn_precompute": _gdn_precompute, "gdn_m16": _gdn_core, "gdn_verify": _gdn_core, "gdn_replay": _gdn_core,
           "moe_block": _moe, "argmax": _argmax}


def check(op, before, netra, ref, ctx, served):
    got = _CHECKS[op](op, before, netra, ref, ctx)
    checks, rel = got[0], got[1]
    row = {"layer": ctx["layer"], "op": op, "served": served, "checks": checks, "rel_l2_vs_torch": rel,
           "ok": served == "netra" and all(c["ok"] for c in checks.values())}
    if len(got) > 2:
        row["flips"] = got[2]
    return row


def summary(rows):
    """Per op over layers: worst measured / bound of each check, pass count, flip rates (MoE)."""
    out = {}
    for r in rows:
        s = out.setdefault(r["op"], {"calls": 0, "ok": 0, "served_netra": 0, "checks": {}, "rel_l2_vs_torch_max": None})
        s["calls"] += 1
        s["ok"] += int(r["ok"])
        s["served_netra"] += int(r["served"] == "netra")
        if r["rel_l2_vs_torch"] is not None:
            s["rel_l2_vs_torch_max"] = max(s["rel_l2_vs_torch_max"] or 0.0, r["rel_l2_vs_torch"])
        for name, c in r["checks"].items():
            w = s["checks"].setdefault(name, {"worst": 0.0, "bound": c["bound"], "beyond": 0})
            w["worst"] = max(w["worst"], c["measured"] if not math.isnan(c["measured"]) else math.inf)
            w["beyond"] += c.get("beyond", c["measured"] if c["bound"] == 0 else 0)
        if "flips" in r:
            f = s.setdefault("flips", {"route_flips": 0, "rows": 0, "code_flip_rate_act_quant_max": 0.0, "code_flip_rate_vs_torch_path_max": 0.0})
            f["route_flips"] += r["flips"]["route_flips"]
            f["rows"] += r["flips"]["rows"]
            f["code_flip_rate_act_quant_max"] = max(f["code_flip_rate_act_quant_max"], r["flips"]["code_flip_rate_act_quant"])
            f["code_flip_rate_vs_torch_path_max"] = max(f["code_flip_rate_vs_torch_path_max"], r["flips"]["code_flip_rate_vs_torch_path"] or 0.0)
    return out
