"""netra.torch_ops on the GPU: a small module calling every netra custom op (norms, attention decode
and verify, the five gdn operations, the routing, expert and block MoE ops, argmax) traced by
torch.compile(fullgraph=True) with no graph break, captured into a torch.cuda.CUDAGraph and
replayed; compiled, eager and replayed results bitwise equal; every call served by netra (served
counters up, fallback counters zero); a call netra declines counted as a fallback with netra's
reason and computed by torch; a forced family counted too."""
import pytest

torch = pytest.importorskip("torch", reason="netra-python-tests skipped: torch is not installed")
import netra.torch_ops as ops  # noqa: E402  (conftest puts python/ on the path)
from netra.torch_ops import FAMILIES  # noqa: E402

D = 8192


def _fp8(g, *shape):
    return (torch.randn(*shape, device="cuda", generator=g) * 64).clamp(-448, 448).to(torch.float8_e4m3fn)


@pytest.fixture(scope="module")
def data():
    ops.prepare()
    g = torch.Generator(device="cuda").manual_seed(11)
    r = lambda *s, std=1.0: (torch.randn(*s, device="cuda", generator=g) * std)  # noqa: E731
    bf = lambda *s, std=1.0: r(*s, std=std).to(torch.bfloat16)  # noqa: E731
    d = {"x": bf(4, 2048), "res": bf(4, 2048), "nw": bf(2048, std=0.1), "o": bf(4, 4096), "z": bf(4, 4096), "gw": bf(128, std=0.1) + 1,
         "logits": r(4, 248320)}
    # attention: decode (2 requests) and verify (1 request of 12 tokens) over one E4M3 pool
    slots = 600
    d["kb"] = (r(slots, 2, 256) * 1.5).to(torch.float8_e4m3fn).view(torch.uint8)
    d["vb"] = (r(slots, 2, 256) * 1.5).to(torch.float8_e4m3fn).view(torch.uint8)
    d["ks"], d["vs"] = torch.tensor([0.9], device="cuda"), torch.tensor([1.1], device="cuda")
    d["q1"] = bf(2, 16, 256)
    d["qo1"] = torch.tensor([0, 1, 2], dtype=torch.int64, device="cuda")
    d["kvp1"] = torch.tensor([0, 100, 137], dtype=torch.int32, device="cuda")
    d["idx1"] = torch.randperm(slots, device="cuda", generator=g)[:137].to(torch.int64)
    d["q12"] = bf(12, 16, 256)
    d["qo12"] = torch.tensor([0, 12], dtype=torch.int64, device="cuda")
    d["kvp12"] = torch.tensor([0, 300], dtype=torch.int32, device="cuda")
    d["idx12"] = torch.randperm(slots, device="cuda", generator=g)[:300].to(torch.int64)
    # gdn: one request of 12 tokens (conv windows, precompute, K0, replay) and one of 16 (M16)
    for T in (12, 16):
        d[f"gx{T}"] = bf(T, D, std=0.5)
        d[f"ga{T}"], d[f"gb{T}"] = bf(T, 32), bf(T, 32)
    d["cw"] = bf(D, 4, std=0.5)
    d["a_log"], d["dt_bias"] = r(32) * 0.5, r(32) * 0.5
    d["slots"] = torch.tensor([0], dtype=torch.int32, device="cuda")
    d["state"] = r(2, 32, 128, 128, std=0.05)
    d["conv_state"] = bf(2, D, 3, std=0.5)
    d["accepted"] = torch.tensor([7], dtype=torch.int32, device="cuda")
    # MoE: 4 tokens through the stages and the block
    d["w13"], d["s13"] = _fp8(g, 257, 1024, 2048), torch.rand(257, 8, 16, device="cuda", generator=g) * 2e-4 + 1e-4
    d["w2"], d["s2"] = _fp8(g, 257, 2048, 512), torch.rand(257, 16, 4, device="cuda", generator=g) * 4e-4 + 2e-4
    d["router"], d["shared"] = bf(256, 2048, std=0.02), bf(2048, std=0.02)
    return d


class EveryOp(torch.nn.Module):
    """Every netra custom op once; returns every output buffer."""

    def forward(self, d: dict, state, conv_state):
        e = lambda *s, dtype=torch.bfloat16: torch.empty(*s, dtype=dtype, device="cuda")  # noqa: E731
        f32, i32 = torch.float32, torch.int32
        n = torch.ops.netra
        h, res, h2, g = e(4, 2048), d["res"].clone(), e(4, 2048), e(4, 4096)
        n.rms_norm(d["x"], d["nw"], h, 1e-6, True)
        n.add_rms_norm(h, res, d["nw"], h2, 1e-6, True)
        n.gated_rms_norm(d["o"], d["z"], d["gw"], g, 1e-6)
        a1, a12 = e(2, 16, 256), e(12, 16, 256)
        n.attention_gqa8(d["q1"], d["kb"], d["vb"], d["qo1"], d["kvp1"], d["idx1"], d["ks"], d["vs"], a1, None, "decode", 1, 1, 1 / 16)
        n.attention_gqa8(d["q12"], d["kb"], d["vb"], d["qo12"], d["kvp12"], d["idx12"], d["ks"], d["vs"], a12, None, "verify", 12, 1, 1 / 16)
        outs = [h, res, h2, g, a1, a12]
        for T in (12, 16):
            y, win = e(T, D), (e(1, T, D, 3) if T == 12 else None)
            n.gdn_conv(d[f"gx{T}"], d["cw"], y, d["slots"], conv_state, win)
            q, k, decay, beta = e(T, 16, 128, dtype=f32), e(T, 16, 128, dtype=f32), e(T, 32, dtype=f32), e(T, 32, dtype=f32)
            n.gdn_precompute(y, d[f"ga{T}"], d[f"gb{T}"], d["a_log"], d["dt_bias"], q, k, decay, beta)
            o = e(T, 32, 128)
            if T == 12:
                n.gdn_verify(q, k, y, decay, beta, state, d["slots"], o)
                n.gdn_replay(q, k, y, decay, beta, state, d["slots"], d["accepted"], win, conv_state)
                outs += [win]
            else:
                n.gdn_m16(q, k, y, decay, beta, state, d["slots"], o)
            outs += [y, q, k, decay, beta, o]
        ids, rw = torch.zeros(4, 9, dtype=i32, device="cuda"), torch.zeros(4, 9, dtype=f32, device="cuda")
        n.moe_router(h2, d["router"], ids, rw)
        n.moe_shared_gate(h2, d["shared"], ids, rw)
        gu, act, act_s, down = e(36, 1024), e(36, 512, dtype=torch.float8_e4m3fn), e(36, 4, dtype=f32), e(4, 2048)
        n.moe_gate_up(h2, ids, d["w13"], d["s13"], gu)
        n.moe_act_quant(gu, act, act_s)
        n.moe_down(act, act_s, ids, rw, d["w2"], d["s2"], down)
        bids, brw, bgu, bact, bact_s, bout = e(4, 9, dtype=i32), e(4, 9, dtype=f32), e(36, 1024), e(36, 512, dtype=torch.float8_e4m3fn), \
            e(36, 4, dtype=f32), e(4, 2048)
        n.moe_block(h2, d["router"], d["shared"], d["w13"], d["s13"], d["w2"], d["s2"], bids, brw, bgu, bact, bact_s, bout, False)
        tok = e(4, dtype=torch.int64)
        n.argmax(d["logits"], tok)
        return outs + [ids, rw, gu, act.view(torch.uint8), act_s, down, bids, brw, bout, tok, state, conv_state]


def _run(fn, d):
    return [t.clone() for t in fn(d, d["state"].clone(), d["conv_state"].clone())]


def _same(a, b):
    return all(x.shape == y.shape and torch.equal(x.view(torch.uint8) if x.dtype.itemsize == 1 else x, y.view(torch.uint8) if y.dtype.itemsize == 1 else y)
               for x, y in zip(a, b))


def test_every_op_served_compiled_captured_and_bitwise(data):
    m = EveryOp()
    ops.reset_counts()
    eager = _run(m, data)
    assert all(v == 0 for v in ops.fallback_counts().values()), ops.fallback_counts()
    assert all(ops.served_counts()[op] >= 1 for op in FAMILIES), ops.served_counts()
    assert _same(eager, _run(m, data))  # deterministic
    assert bool(torch.isfinite(eager[-4].float()).all()) and bool(torch.isfinite(eager[-7].float()).all())  # block and stage outputs

    explanation = torch._dynamo.explain(m)(data, data["state"].clone(), data["conv_state"].clone())
    assert explanation.graph_break_count == 0, explanation.break_reasons
    compiled = torch.compile(m, fullgraph=True)
    assert _same(eager, _run(compiled, data))

    state, conv_state = data["state"].clone(), data["conv_state"].clone()
    s0, c0 = state.clone(), conv_state.clone()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        m(data, state, conv_state)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        outs = m(data, state, conv_state)
    counted = ops.served_counts()
    for _ in range(3):
        state.copy_(s0)
        conv_state.copy_(c0)
        graph.replay()
        torch.cuda.synchronize()
        assert _same(eager, [t.clone() for t in outs])
    assert ops.served_counts() == counted  # replays run the captured kernels; the counters count host calls


def test_declined_and_forced_calls_are_counted_fallbacks(data):
    ops.reset_counts()
    logits = data["logits"].to(torch.bfloat16)  # netra's argmax takes float32 logits only
    tok = torch.empty(4, dtype=torch.int64, device="cuda")
    torch.ops.netra.argmax(logits, tok)
    assert ops.fallback_counts()["argmax"] == 1 and ops.served_counts()["argmax"] == 0
    assert ops.last_fallback_reason("argmax")
    assert torch.equal(tok, torch.argmax(logits, dim=-1))
    out = torch.empty(4, 2048, dtype=torch.bfloat16, device="cuda")
    with ops.forced({"norm"}):
        torch.ops.netra.rms_norm(data["x"], data["nw"], out, 1e-6, True)
    assert ops.fallback_counts()["rms_norm"] == 1 and "forced" in ops.last_fallback_reason("rms_norm")
    served = torch.empty_like(out)
    torch.ops.netra.rms_norm(data["x"], data["nw"], served, 1e-6, True)
    assert ops.served_counts()["rms_norm"] == 1
    step = 2.0 ** -7 * served.float().abs().amax()
    assert float((served.float() - out.float()).abs().max()) <= float(step)  # torch's sum order: within a BF16 step
    with ops.recording() as rows:
        torch.ops.netra.rms_norm(data["x"], data["nw"], served, 1e-6, True)
        torch.ops.netra.argmax(logits, tok)
    assert rows[0]["served"] == "netra" and "=> tactic" in rows[0]["detail"]
    assert rows[1]["served"] == "fallback"


@pytest.mark.parametrize("B", [65, 129])
def test_attention_past_64_served_and_beyond_128_falls_back_inside_a_graph(data, B):
    """65 requests: the widened GQA8 decode serves them; 129: past netra's decode batches (1..128),
    the op runs its torch fallback, which with the engine's dense slot table (kv_table, kv_lens) is
    capturable. Both, eager and captured, equal the contract's reference within BF16 output rounding."""
    from netra.attention import reference
    L = 40
    g = torch.Generator(device="cuda").manual_seed(21)
    q = torch.randn(B, 16, 256, device="cuda", generator=g).to(torch.bfloat16)
    table = torch.randint(0, data["kb"].shape[0], (B, L), device="cuda", generator=g)
    lens = torch.randint(1, L + 1, (B,), device="cuda", generator=g).to(torch.int32)
    indptr = torch.cat([torch.zeros(1, dtype=torch.int64, device="cuda"), lens.long().cumsum(0)]).to(torch.int32)
    indices = torch.cat([table[b, :int(lens[b])] for b in range(B)])
    qo = torch.arange(B + 1, dtype=torch.int64, device="cuda")
    want = reference(q, data["kb"], data["vb"], qo, indptr, indices, data["ks"], data["vs"])
    out = torch.full_like(q, -77.0)
    args = (q, data["kb"], data["vb"], qo, indptr, indices, data["ks"], data["vs"], out, None, "decode", 1, 1, 1 / 16, table, lens)
    ops.reset_counts()
    torch.ops.netra.attention_gqa8(*args)  # eager first (warm), then captured
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        torch.ops.netra.attention_gqa8(*args)
    out.fill_(-77.0)
    graph.replay()
    torch.cuda.synchronize()
    netra_serves = B <= 128
    assert ops.fallback_counts()["attention_gqa8"] == (0 if netra_serves else 2)
    assert ops.served_counts()["attention_gqa8"] == (2 if netra_serves else 0)
    scale = want.float().abs().amax(dim=-1, keepdim=True).clamp_min(1e-3)
    assert bool(((out.float() - want.float()).abs() <= scale * 2.0 ** -7 + 2.0 ** -9).all())
