"""netra.attention_gqa4_extend on the GPU: ragged extensions (1..12 tokens) over paged FP8
prefixes (length 0 and 1 included) against the torch reference within BF16 output rounding plus
the online-softmax association; the piecewise-prefill call of <= 16 tokens that a broad shape
predicate once sent to the extend kernel falls back (or raises with fallback=False, explain naming
the phase); refusals inside the promoted domain raise and write nothing; a CUDA graph replays."""
import pytest

torch = pytest.importorskip("torch", reason="netra-python-tests skipped: torch is not installed")
import netra  # noqa: E402  (conftest puts python/ on the path)
from netra.attention import extend_reference  # noqa: E402

POISON = -77.0


def make(prefixes, extents, seed=0):
    g = torch.Generator(device="cuda").manual_seed(seed)
    total, tokens = sum(prefixes), sum(extents)
    slots = total + 50
    q = torch.randn(tokens, 32, 128, device="cuda", generator=g).to(torch.bfloat16)
    ke = torch.randn(tokens, 8, 128, device="cuda", generator=g).to(torch.bfloat16)
    ve = torch.randn(tokens, 8, 128, device="cuda", generator=g).to(torch.bfloat16)
    k = (torch.randn(slots, 8, 128, device="cuda", generator=g) * 1.5).to(torch.float8_e4m3fn).view(torch.uint8)
    v = (torch.randn(slots, 8, 128, device="cuda", generator=g) * 1.5).to(torch.float8_e4m3fn).view(torch.uint8)
    qo = torch.tensor([0] + torch.tensor(extents).cumsum(0).tolist(), device="cuda", dtype=torch.int64)
    kvp = torch.tensor([0] + torch.tensor(prefixes).cumsum(0).tolist(), device="cuda", dtype=torch.int32)
    idx = torch.randperm(slots, device="cuda", generator=g)[:total].to(torch.int64)
    scales = torch.tensor([0.9, 1.1], device="cuda")
    return q, ke, ve, k, v, qo, kvp, idx, scales[0:1], scales[1:2]


def close(got, want):
    scale = want.float().abs().amax(dim=-1, keepdim=True).clamp_min(1e-3)
    return bool(((got.float() - want.float()).abs() <= scale * 2.0 ** -7 + 2.0 ** -9).all())


@pytest.fixture(scope="module")
def handle():
    return netra.AttentionGQA4Extend()


@pytest.mark.parametrize("prefixes,extents", [([0], [12]), ([0, 1, 63, 65, 300], [1, 12, 5, 12, 7]), ([4096], [12]), ([1000] * 16, [12] * 16)])
def test_extend_matches_reference(handle, prefixes, extents):
    args = make(prefixes, extents)
    out = torch.full_like(args[0], POISON)
    handle(*args, out=out, fallback=False)
    assert close(out, extend_reference(*args))


def test_piecewise_prefill_falls_back_or_raises(handle):
    args = make([100, 40], [12, 12], seed=4)  # M = 12 <= 16 tokens per request: an extend call by shape
    want = extend_reference(*args)
    assert close(handle(*args, phase="prefill"), want)
    with pytest.raises(netra.NetraError) as e:
        handle(*args, phase="prefill", fallback=False)
    assert e.value.status == netra.Status.NOT_SUPPORTED
    assert "got prefill" in handle.explain(*args, phase="prefill")


def test_refusals_inside_the_domain_raise_and_write_nothing(handle):
    q, ke, ve, k, v, qo, kvp, idx, ks, vs = make([100, 40], [12, 3], seed=5)
    out = torch.full_like(q, POISON)
    with pytest.raises(netra.NetraError) as e:
        handle(q, ke[:-1], ve, k, v, qo, kvp, idx, ks, vs, out=out)  # k_extend shorter than q
    assert e.value.status == netra.Status.INVALID_ARGUMENT and "'k_extend'" in str(e.value)
    # A longest extension of 13 is outside every tactic's domain (1..12): not a strict refusal but
    # no tactic, so the call stays on the caller's path; without a fallback it raises NOT_SUPPORTED
    # and explain names the field.
    with pytest.raises(netra.NetraError) as e:
        handle(q, ke, ve, k, v, qo, kvp, idx, ks, vs, out=out, longest_extension=13, fallback=False)
    assert e.value.status == netra.Status.NOT_SUPPORTED and "longest extension 13" in str(e.value)
    assert "'tq'" in handle.explain(q, ke, ve, k, v, qo, kvp, idx, ks, vs, out=out, longest_extension=13)
    torch.cuda.synchronize()
    assert bool((out == POISON).all())


def test_cuda_graph_replays_with_changing_inputs(handle):
    args = list(make([2000] * 4, [12, 5, 12, 1], seed=6))
    out = torch.empty_like(args[0])
    handle(*args, out=out)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        handle(*args, out=out, fallback=False)
    for i in range(3):
        args[0].copy_(torch.randn_like(args[0], dtype=torch.float32).to(torch.bfloat16))
        args[9].fill_(0.5 + i)
        graph.replay()
        torch.cuda.synchronize()
        assert close(out, extend_reference(*args))
