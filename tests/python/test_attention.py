"""netra.attention_gqa8 on the GPU: decode and verification against the torch reference (the
contract's semantics) within BF16 output rounding plus the online-softmax association, E4M3 pools
given as uint8 or float8_e4m3fn, the fallback for calls netra declines (another phase, head shape
or dtype), refusals inside the promoted domain that raise and write nothing (an out smaller than q,
a misaligned q, a strided q), and a torch.cuda.CUDAGraph replayed with changing inputs."""
import pytest

torch = pytest.importorskip("torch", reason="netra-python-tests skipped: torch is not installed")
import netra  # noqa: E402  (conftest puts python/ on the path)
from netra.attention import reference  # noqa: E402

POISON = -77.0


def make(lengths, tq=1, seed=0, dtype=torch.uint8):
    g = torch.Generator(device="cuda").manual_seed(seed)
    total, batch = sum(lengths), len(lengths)
    slots = total + 50
    q = torch.randn(batch * tq, 16, 256, device="cuda", generator=g).to(torch.bfloat16)
    k = (torch.randn(slots, 2, 256, device="cuda", generator=g) * 1.5).to(torch.float8_e4m3fn)
    v = (torch.randn(slots, 2, 256, device="cuda", generator=g) * 1.5).to(torch.float8_e4m3fn)
    if dtype == torch.uint8:
        k, v = k.view(torch.uint8), v.view(torch.uint8)
    qo = torch.arange(batch + 1, device="cuda", dtype=torch.int64) * tq
    kvp = torch.tensor([0] + torch.tensor(lengths).cumsum(0).tolist(), device="cuda", dtype=torch.int32)
    idx = torch.randperm(slots, device="cuda", generator=g)[:total].to(torch.int64)
    scales = torch.tensor([0.9, 1.1], device="cuda")
    return q, k, v, qo, kvp, idx, scales[0:1], scales[1:2]


def close(got, want):
    """BF16 output rounding and the online softmax's association (the contract's bound is tighter
    per element; tests/gpu holds the exact bound): relative 2^-7 of the row's scale."""
    scale = want.float().abs().amax(dim=-1, keepdim=True).clamp_min(1e-3)
    return bool(((got.float() - want.float()).abs() <= scale * 2.0 ** -7 + 2.0 ** -9).all())


@pytest.fixture(scope="module")
def handle():
    return netra.AttentionGQA8()


@pytest.mark.parametrize("lengths", [[1], [0, 1, 63, 65, 300], [4096], [1000] * 16])
@pytest.mark.parametrize("dtype", [torch.uint8, torch.float8_e4m3fn])
def test_decode_matches_reference(handle, lengths, dtype):
    q, k, v, qo, kvp, idx, ks, vs = make(lengths, dtype=dtype)
    out = torch.full_like(q, POISON)
    handle(q, k, v, qo, kvp, idx, ks, vs, out=out, fallback=False)
    assert close(out, reference(q, k, v, qo, kvp, idx, ks, vs))


def test_verify_matches_reference(handle):
    q, k, v, qo, kvp, idx, ks, vs = make([12, 500, 3000], tq=12, seed=3)
    out = handle(q, k, v, qo, kvp, idx, ks, vs, phase="verify", tokens_per_request=12, fallback=False)
    assert close(out, reference(q, k, v, qo, kvp, idx, ks, vs, tokens_per_request=12))


def test_other_phases_fall_back_or_raise(handle):
    q, k, v, qo, kvp, idx, ks, vs = make([100, 40], tq=12, seed=4)
    want = reference(q, k, v, qo, kvp, idx, ks, vs, tokens_per_request=12)
    got = handle(q, k, v, qo, kvp, idx, ks, vs, phase="prefill", tokens_per_request=12)  # the article's mistake: not a verification
    assert close(got, want)
    with pytest.raises(netra.NetraError) as e:
        handle(q, k, v, qo, kvp, idx, ks, vs, phase="prefill", tokens_per_request=12, fallback=False)
    assert e.value.status == netra.Status.NOT_SUPPORTED
    assert "prefill" in handle.explain(q, k, v, qo, kvp, idx, ks, vs, phase="prefill", tokens_per_request=12)


def test_refusals_inside_the_domain_raise_and_write_nothing(handle):
    q, k, v, qo, kvp, idx, ks, vs = make([100, 40], seed=5)
    small = torch.full((1, 16, 256), POISON, device="cuda", dtype=torch.bfloat16)
    with pytest.raises(netra.NetraError) as e:
        handle(q, k, v, qo, kvp, idx, ks, vs, out=small)
    assert e.value.status == netra.Status.INVALID_ARGUMENT and "'out'" in str(e.value)
    assert bool((small == POISON).all())
    out = torch.full_like(q, POISON)
    wide = torch.zeros(q.shape[0], 16, 512, device="cuda", dtype=torch.bfloat16)
    wide[..., :256] = q
    with pytest.raises(netra.NetraError) as e:
        handle(wide[..., :256], k, v, qo, kvp, idx, ks, vs, out=out)  # strided tokens
    assert "'q'" in str(e.value)
    flat = torch.zeros(q.numel() + 8, device="cuda", dtype=torch.bfloat16)
    misaligned = flat[1:1 + q.numel()].view(q.shape)  # 2-byte aligned: the contract needs 16
    misaligned.copy_(q)
    with pytest.raises(netra.NetraError) as e:
        handle(misaligned, k, v, qo, kvp, idx, ks, vs, out=out)
    assert e.value.status == netra.Status.INVALID_ARGUMENT and "'q'" in str(e.value)
    torch.cuda.synchronize()
    assert bool((out == POISON).all())


def test_cuda_graph_replays_with_changing_inputs(handle):
    q, k, v, qo, kvp, idx, ks, vs = make([2000] * 4, seed=6)
    out = torch.empty_like(q)
    handle(q, k, v, qo, kvp, idx, ks, vs, out=out)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        handle(q, k, v, qo, kvp, idx, ks, vs, out=out, fallback=False)
    for i in range(5):
        q.copy_(torch.randn_like(q, dtype=torch.float32).to(torch.bfloat16))
        vs.fill_(0.5 + i)
        graph.replay()
        torch.cuda.synchronize()
        assert close(out, reference(q, k, v, qo, kvp, idx, ks, vs))
