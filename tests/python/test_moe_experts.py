"""netra.MoeExperts and netra.MoeBlock on the GPU (libnetra's C ABI, netra/c/moe_experts.h):
gate_up and down within the contracts' policy of the FP64 reference (the same check as
bench/moe_block.py), the torch reference path within it too, the whole block fused == unfused
and graph replay == eager bitwise, and calls no tactic admits reported as NOT_SUPPORTED."""
import pytest

torch = pytest.importorskip("torch", reason="netra-python-tests skipped: torch is not installed")
import netra  # noqa: E402
from netra.moe_experts import down_torch, gate_up_torch, quantize_hidden  # noqa: E402


@pytest.fixture(scope="module")
def weights():
    g = torch.Generator(device="cuda").manual_seed(7)
    def fp8(*shape):
        b = torch.randint(0, 256, shape, dtype=torch.uint8, device="cuda", generator=g)
        b[(b & 0x7F) == 0x7F] ^= 1
        return b.view(torch.float8_e4m3fn)
    return {"w13": fp8(257, 1024, 2048), "s13": torch.empty(257, 8, 16, device="cuda").uniform_(1e-4, 4e-3, generator=g),
            "w2": fp8(257, 2048, 512), "s2": torch.empty(257, 16, 4, device="cuda").uniform_(1e-4, 4e-3, generator=g),
            "router": (0.02 * torch.randn(256, 2048, device="cuda", generator=g)).to(torch.bfloat16),
            "shared": (0.02 * torch.randn(2048, device="cuda", generator=g)).to(torch.bfloat16)}


def routed_ids(m, seed):
    g = torch.Generator(device="cpu").manual_seed(seed)
    ids = torch.stack([torch.randperm(256, generator=g)[:8] for _ in range(m)])
    return torch.cat([ids, torch.full((m, 1), 256)], dim=1).to(torch.int32).cuda()


def within_policy(got, ref, mag):
    bound = ref.abs() * 2.0 ** -8 + mag * 2.0 ** -15 + 2.0 ** -120
    ok = torch.where(torch.isnan(ref), torch.isnan(got.double()), (got.double() - ref).abs() <= bound)
    return int((~ok).sum())


def gate_up_ref64(h, ids, w):
    m = h.shape[0]
    q, sx = quantize_hidden(h)
    x = (q.double().view(m, 16, 128) * sx.double().view(m, 16, 1)).view(m, 2048)
    e = ids.reshape(-1).long()
    wd = (w["w13"][e].double().view(-1, 8, 128, 16, 128) * w["s13"][e].double().view(-1, 8, 1, 16, 1)).view(-1, 1024, 2048)
    xr = x[torch.arange(9 * m, device="cuda") // 9]
    return torch.bmm(wd, xr.unsqueeze(-1)).squeeze(-1), torch.bmm(wd.abs(), xr.abs().unsqueeze(-1)).squeeze(-1)


def down_ref64(act, scales, ids, rw, w):
    m = ids.shape[0]
    e = ids.reshape(-1).long()
    a = (act.double().view(-1, 4, 128) * scales.double().view(-1, 4, 1)).view(-1, 512)
    wd = (w["w2"][e].double().view(-1, 16, 128, 4, 128) * w["s2"][e].double().view(-1, 16, 1, 4, 1)).view(-1, 2048, 512)
    y = torch.bmm(wd, a.unsqueeze(-1)).squeeze(-1).view(m, 9, 2048)
    ya = torch.bmm(wd.abs(), a.abs().unsqueeze(-1)).squeeze(-1).view(m, 9, 2048)
    r = rw.double().view(m, 9, 1)
    return (y * r).sum(1), (ya * r.abs()).sum(1)


def tie_rows(m, seed):
    """BF16 rows whose every 128-block sits on E4M3 ties of the gate_up quantization (the C++
    oracles' tie_hidden_rows): amax A = a / 128 * 2^e, a in {184, 192, 240, 252}, where 448 / A
    (one rounding) and (1 / A) * 448 (two) differ by an ulp, and values +-(3/4) A 2^-j, j = 0..5,
    whose x * 448 / A is an E4M3 midpoint."""
    g = torch.Generator(device="cpu").manual_seed(seed)
    a = torch.tensor([184.0, 192.0, 240.0, 252.0])[torch.randint(0, 4, (m * 16,), generator=g)]
    amax = a / 128 * 2.0 ** (torch.randint(0, 5, (m * 16,), generator=g) - 2).float()
    x = (torch.rand(m * 16, 128, generator=g) * 2 - 1) * 0.5 * amax[:, None]
    sign = lambda n: torch.randint(0, 2, (m * 16, n), generator=g).float() * 2 - 1  # noqa: E731
    x[:, 0:1] = amax[:, None] * sign(1)
    x[:, 1:13:2] = 0.75 * amax[:, None] * 2.0 ** -torch.arange(6.0) * sign(6)
    return x.view(m, 2048).to(torch.bfloat16).cuda()


def test_quantize_hidden_is_the_contracts_bitwise():
    """quantize_hidden (the reference of every check here and in bench/moe_block.py) against the
    device's fused quantization bit for bit: one-hot W13 rows (row n of expert 0 reads k = 2n, of
    expert 1 k = 2n + 1, weight 1.0, scale 1) make out = bf16(sx * q). Tie rows (where a
    reciprocal-then-multiply r, torch's `448.0 / amax`, rounds every tie the other way) and
    random rows (about 4 % of randn blocks hold such a tie)."""
    ex = netra.MoeExperts()
    w13 = torch.zeros(257, 1024, 2048, dtype=torch.uint8, device="cuda")
    n = torch.arange(1024, device="cuda")
    w13[0, n, 2 * n] = 0x38
    w13[1, n, 2 * n + 1] = 0x38
    w13 = w13.view(torch.float8_e4m3fn)
    s13 = torch.ones(257, 8, 16, device="cuda")
    ids = torch.tensor([0, 1, 2, 3, 4, 5, 6, 7, 256], dtype=torch.int32, device="cuda").repeat(16, 1)
    torch.manual_seed(11)
    rows = [tie_rows(16, 1), tie_rows(16, 2)] + [torch.randn(16, 2048, device="cuda").to(torch.bfloat16) for _ in range(4)]
    reciprocal_differs = 0
    for h in rows:
        gu = ex.gate_up(h, ids, w13, s13).view(16, 9, 1024)
        q, sx = quantize_hidden(h)
        x = (q.float().view(16, 16, 128) * sx.view(16, 16, 1)).view(16, 2048).to(torch.bfloat16).float()
        assert torch.equal(gu[:, 0].float(), x[:, 0::2])  # as values: +0 == -0
        assert torch.equal(gu[:, 1].float(), x[:, 1::2])
        # sensitivity: the two-roundings r quantizes these rows differently
        hb = h.float().view(16, 16, 128)
        r2 = 448.0 / hb.abs().amax(dim=-1, keepdim=True)
        q2 = (hb * r2).clamp(-448.0, 448.0).to(torch.float8_e4m3fn)
        reciprocal_differs += int((q2.view(torch.uint8).view(16, 2048) != q.view(torch.uint8)).sum())
    assert reciprocal_differs > 0


@pytest.mark.parametrize("m", [1, 3, 16])
def test_gate_up_and_down_within_policy(weights, m):
    torch.backends.cuda.matmul.allow_tf32 = False
    ex = netra.MoeExperts()
    h = torch.randn(m, 2048, device="cuda").to(torch.bfloat16)
    ids = routed_ids(m, m)
    gu = ex.gate_up(h, ids, weights["w13"], weights["s13"])
    ref, mag = gate_up_ref64(h, ids, weights)
    assert within_policy(gu, ref, mag) == 0
    assert within_policy(gate_up_torch(h, ids, weights["w13"], weights["s13"]), ref, mag) == 0
    q, s = netra.MoeRouting().act_quant(gu, fallback=False)  # the contract's exact act_quant
    rw = torch.rand(m, 9, device="cuda") * 0.2
    out = ex.down(q, ids, rw, weights["w2"], weights["s2"], act_scales=s)
    dref, dmag = down_ref64(q, s, ids, rw, weights)
    assert within_policy(out, dref, dmag) == 0
    assert within_policy(down_torch(q, s, ids, rw, weights["w2"], weights["s2"]), dref, dmag) == 0
    if m <= 4:
        fused = ex.down(gu, ids, rw, weights["w2"], weights["s2"])
        assert within_policy(fused, dref, dmag) == 0


def test_block_fused_equals_unfused_and_graph_equals_eager(weights):
    block = netra.MoeBlock()
    for m in (1, 4):
        h = torch.randn(m, 2048, device="cuda").to(torch.bfloat16)
        args = (h, weights["router"], weights["shared"], weights["w13"], weights["s13"], weights["w2"], weights["s2"])
        b1, b2, b3 = block.buffers(m), block.buffers(m), block.buffers(m)
        unfused = block(*args, b1).clone()
        fused = block(*args, b2, fused=True).clone()
        assert torch.equal(unfused.view(torch.int16), fused.view(torch.int16))
        assert torch.all(b1["ids"][:, 8] == 256)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            block(*args, b3)
        for _ in range(2):
            graph.replay()
        torch.cuda.synchronize()
        assert torch.equal(b3["out"].view(torch.int16), unfused.view(torch.int16))


def test_calls_outside_the_tactics_are_not_supported(weights):
    ex = netra.MoeExperts()
    h = torch.randn(17, 2048, device="cuda").to(torch.bfloat16)
    with pytest.raises(netra.NetraError) as e:
        ex.gate_up(h, routed_ids(17, 1), weights["w13"], weights["s13"])
    assert e.value.status == netra.Status.NOT_SUPPORTED
    gu = torch.zeros(45, 1024, device="cuda", dtype=torch.bfloat16)
    with pytest.raises(netra.NetraError) as e:  # act_quant fused: at most 4 tokens
        ex.down(gu, routed_ids(5, 2), torch.ones(5, 9, device="cuda"), weights["w2"], weights["s2"])
    assert e.value.status == netra.Status.NOT_SUPPORTED
