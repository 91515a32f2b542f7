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
