"""netra.MoeRouting on the GPU against the torch composition of the same math: act_quant (scales
and values agree except where torch's SiLU rounds differently, and on the contract's special
groups), the router (ids equal on well-separated random tokens, weights within 1e-5), the shared
gate (within 1e-6), the complete nine-route layout, a torch.cuda.CUDAGraph replayed with changing
inputs equal to eager calls bitwise, the fallback for calls no tactic admits, and the strict
refusal inside a promoted domain."""
import pytest

torch = pytest.importorskip("torch", reason="netra-python-tests skipped: torch is not installed")
import netra  # noqa: E402
from netra.moe_routing import act_quant_torch, router_torch, shared_gate_torch  # noqa: E402


@pytest.fixture(scope="module")
def routing():
    return netra.MoeRouting()


def test_act_quant_agrees_with_torch(routing):
    x = torch.randn(4608, 1024, device="cuda").to(torch.bfloat16)
    q, s = routing.act_quant(x, fallback=False)
    tq, ts = act_quant_torch(x)
    assert q.dtype == torch.float8_e4m3fn and q.shape == (4608, 512) and s.shape == (4608, 4)
    same_values = (q.view(torch.uint8) == tq.view(torch.uint8)).float().mean().item()
    assert same_values > 0.999
    torch.testing.assert_close(s, ts, rtol=2 ** -7, atol=0)


def test_act_quant_zero_group_keeps_signed_zeros(routing):
    x = torch.randn(9, 1024, device="cuda").to(torch.bfloat16)
    x[:, :128] = 0.0  # gate 0 -> SiLU 0 -> group 0 all zeros (amax 0)
    q, s = routing.act_quant(x, fallback=False)
    assert torch.all(s[:, 0] == 0)
    assert torch.all((q[:, :128].view(torch.uint8) & 0x7F) == 0)


def test_router_and_shared_gate_agree_with_torch(routing):
    m = 16
    h = torch.randn(m, 2048, device="cuda").to(torch.bfloat16)
    rw = (0.03 * torch.randn(256, 2048, device="cuda")).to(torch.bfloat16)
    gw = (0.03 * torch.randn(2048, device="cuda")).to(torch.bfloat16)
    ids, weights = routing.route(h, rw, gw, fallback=False)
    tids = torch.zeros(m, 9, dtype=torch.int32, device="cuda")
    tw = torch.zeros(m, 9, dtype=torch.float32, device="cuda")
    torch.backends.cuda.matmul.allow_tf32 = False
    router_torch(h, rw, tids, tw)
    shared_gate_torch(h, gw, tids, tw)
    assert (ids[:, :8] == tids[:, :8]).float().mean().item() >= 0.95
    torch.testing.assert_close(weights[:, 8], tw[:, 8], rtol=1e-6, atol=1e-7)
    assert torch.all(ids[:, 8] == 256)
    agree = ids[:, :8] == tids[:, :8]
    torch.testing.assert_close(weights[:, :8][agree], tw[:, :8][agree], rtol=1e-5, atol=1e-7)
    assert torch.allclose(weights[:, :8].sum(dim=1), torch.ones(m, device="cuda"), atol=1e-6)


def test_graph_replay_equals_eager(routing):
    m = 8
    h = torch.empty(m, 2048, device="cuda", dtype=torch.bfloat16)
    rw = (0.03 * torch.randn(256, 2048, device="cuda")).to(torch.bfloat16)
    gw = (0.03 * torch.randn(2048, device="cuda")).to(torch.bfloat16)
    gu = torch.empty(9 * m, 1024, device="cuda", dtype=torch.bfloat16)
    ids = torch.zeros(m, 9, dtype=torch.int32, device="cuda")
    weights = torch.zeros(m, 9, dtype=torch.float32, device="cuda")
    q = torch.empty(9 * m, 512, dtype=torch.float8_e4m3fn, device="cuda")
    s = torch.empty(9 * m, 4, dtype=torch.float32, device="cuda")
    h.copy_(torch.randn(m, 2048, device="cuda"))
    gu.copy_(torch.randn(9 * m, 1024, device="cuda"))
    routing.route(h, rw, gw, ids, weights, fallback=False)  # warm
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        routing.route(h, rw, gw, ids, weights, fallback=False)
        routing.act_quant(gu, q, s, fallback=False)
    for _ in range(10):
        h.copy_(torch.randn(m, 2048, device="cuda"))
        gu.copy_(torch.randn(9 * m, 1024, device="cuda"))
        graph.replay()
        torch.cuda.synchronize()
        eids, ew = routing.route(h, rw, gw, fallback=False)
        eq, es = routing.act_quant(gu, fallback=False)
        assert torch.equal(ids, eids) and torch.equal(weights.view(torch.int32), ew.view(torch.int32))
        assert torch.equal(q.view(torch.uint8), eq.view(torch.uint8)) and torch.equal(s.view(torch.int32), es.view(torch.int32))


def test_fallback_and_strict_refusal(routing):
    h = torch.randn(200, 2048, device="cuda").to(torch.bfloat16)  # 200 tokens: no router tactic
    rw = (0.03 * torch.randn(256, 2048, device="cuda")).to(torch.bfloat16)
    ids, weights = routing.router(h, rw)  # torch runs it
    assert ids.shape == (200, 9)
    with pytest.raises(netra.NetraError) as e:
        routing.router(h, rw, fallback=False)
    assert e.value.status == netra.Status.NOT_SUPPORTED
    x = torch.randn(10 * 1024 + 1, device="cuda").to(torch.bfloat16)[1:].view(10, 1024)  # misaligned rows
    with pytest.raises(netra.NetraError) as e:
        routing.act_quant(x[:9], fallback=False)
    assert e.value.status == netra.Status.INVALID_ARGUMENT
