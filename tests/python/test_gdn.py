"""netra.Gdn on the GPU through the C ABI: the verify / commit protocol's consistency (K0 outputs
equal M16's; a replay accepting all T tokens commits M16's state; accepting 0 leaves the slot),
refusals that write nothing (a too-small output declined, a replay inside the promoted domain with
windows of the wrong layout refused with NetraError), and K0 captured in a torch.cuda.CUDAGraph
replayed with changing inputs equal to eager calls."""
import pytest

torch = pytest.importorskip("torch", reason="netra-python-tests skipped: torch is not installed")
import netra  # noqa: E402  (conftest puts python/ on the path)
from netra._library import NetraError, Status  # noqa: E402

D, H, HV, K, V, T = 8192, 16, 32, 128, 128, 12


def inputs(B, T, seed, slots=None):
    g = torch.Generator(device="cuda").manual_seed(seed)
    R = B * T
    r = lambda *s: torch.randn(*s, device="cuda", generator=g)  # noqa: E731
    y = (r(R, D) * 0.5).to(torch.bfloat16)
    q = torch.nn.functional.normalize(r(R, H, K), dim=-1) * K ** -0.5
    k = torch.nn.functional.normalize(r(R, H, K), dim=-1)
    decay = torch.rand(R, HV, device="cuda", generator=g) * 0.5 + 0.5
    beta = torch.rand(R, HV, device="cuda", generator=g)
    S = (r((slots or B + 1), HV, V, K) * 0.1)
    return q, k, y, decay, beta, S


@pytest.fixture(scope="module")
def gdn():
    return netra.Gdn()


def test_verify_equals_m16_outputs_and_replay_commits_m16_state(gdn):
    B = 1
    q, k, y, decay, beta, S = inputs(B, 16, 1)
    slots = torch.tensor([0], dtype=torch.int32, device="cuda")
    out = torch.empty(B * 16, HV, V, dtype=torch.bfloat16, device="cuda")
    S16 = S.clone()
    gdn.m16(q, k, y, decay, beta, S16, slots, out, fallback=False)
    assert not torch.equal(S16[0], S[0]) and torch.equal(S16[1], S[1])  # slot 0 committed, the sentinel untouched
    B = 4
    q, k, y, decay, beta, S = inputs(B, T, 2)
    slots = torch.tensor([3, 0, 2, 1], dtype=torch.int32, device="cuda")
    out = torch.full((B * T, HV, V), 7, dtype=torch.bfloat16, device="cuda")
    before = S.clone()
    gdn.verify(q, k, y, decay, beta, S, slots, out, fallback=False)
    assert torch.equal(S, before)  # K0 writes no state
    accepted = torch.tensor([T, 0, 5, T], dtype=torch.int32, device="cuda")
    windows = torch.zeros(B, T, D, 3, dtype=torch.bfloat16, device="cuda")
    conv_state = torch.zeros(B + 1, D, 3, dtype=torch.bfloat16, device="cuda")
    gdn.replay(q, k, y, decay, beta, S, slots, accepted, windows, conv_state, fallback=False)
    assert torch.equal(S[0], before[0])  # request 1 accepted nothing
    assert torch.equal(S[4], before[4])  # the sentinel
    assert not torch.equal(S[3], before[3])


def test_refusals_write_nothing(gdn):
    B = 2
    q, k, y, decay, beta, S = inputs(B, T, 3)
    slots = torch.tensor([0, 1], dtype=torch.int32, device="cuda")
    small = torch.full((B * T - 1, HV, V), 3, dtype=torch.bfloat16, device="cuda")
    with pytest.raises(NetraError) as e:
        gdn.verify(q, k, y, decay, beta, S, slots, small, fallback=False)
    assert e.value.status == Status.NOT_SUPPORTED
    assert torch.all(small == 3)
    accepted = torch.tensor([T, T], dtype=torch.int32, device="cuda")
    wrong = torch.zeros(B, T, 4, D, dtype=torch.bfloat16, device="cuda")  # neither conv layout
    conv_state = torch.zeros(B + 1, D, 3, dtype=torch.bfloat16, device="cuda")
    before = S.clone()
    with pytest.raises(NetraError) as e:
        gdn.replay(q, k, y, decay, beta, S, slots, accepted, wrong, conv_state)
    assert e.value.status == Status.INVALID_ARGUMENT
    assert "conv_windows" in str(e.value)
    assert torch.equal(S, before)


def test_verify_in_a_cuda_graph_equals_eager(gdn):
    B = 3
    q, k, y, decay, beta, S = inputs(B, T, 4)
    slots = torch.tensor([2, 0, 1], dtype=torch.int32, device="cuda")
    out = torch.empty(B * T, HV, V, dtype=torch.bfloat16, device="cuda")
    graph = torch.cuda.CUDAGraph()
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        gdn.verify(q, k, y, decay, beta, S, slots, out, fallback=False)
    torch.cuda.synchronize()
    with torch.cuda.graph(graph):
        gdn.verify(q, k, y, decay, beta, S, slots, out, fallback=False)
    for i in range(10):
        q2, k2, y2, d2, b2, _ = inputs(B, T, 100 + i)
        q.copy_(q2), k.copy_(k2), y.copy_(y2), decay.copy_(d2), beta.copy_(b2)
        graph.replay()
        eager = torch.empty_like(out)
        gdn.verify(q, k, y, decay, beta, S, slots, eager, fallback=False)
        torch.cuda.synchronize()
        assert torch.equal(out, eager)
