"""netra's normalization family from torch on the GPU: every operation within one BF16 step of
the torch composition of the same math (the derived bound: only the FP32 summation order
differs), the same bits whatever the mapping (a token normalized alone or among 700, strided or
compact), r' exactly bf16(x + r), the E4M3 output dequantizing within one E4M3 step, the
fallback for calls netra declines, the strict refusals inside the promoted domain (nothing
written), and a torch.cuda.CUDAGraph replayed with changing inputs."""
import pytest

torch = pytest.importorskip("torch", reason="netra-python-tests skipped: torch is not installed")
import netra  # noqa: E402  (conftest puts python/ on the path)
from netra import norm as N  # noqa: E402
from netra._library import NetraError, Status  # noqa: E402

EPS = 1e-6


def ulps(a, b):
    def ordered(t):
        i = t.view(torch.int16).to(torch.int32)
        return torch.where(i < 0, -32768 - i, i)
    return int((ordered(a) - ordered(b)).abs().max().item())


@pytest.fixture(scope="module")
def handle():
    return N.Norm()


@pytest.fixture(scope="module")
def generator():
    return torch.Generator(device="cuda").manual_seed(28)


def bf16(shape, generator, scale=1.0):
    return (torch.randn(shape, device="cuda", generator=generator) * scale).to(torch.bfloat16)


@pytest.mark.parametrize("tokens", [1, 16, 64, 65, 700])
@pytest.mark.parametrize("zero_centred", [False, True])
def test_rms_norm_within_one_step_of_torch_and_mapping_independent(handle, generator, tokens, zero_centred):
    x = bf16((tokens, 2048), generator)
    w = bf16((2048,), generator, 0.1) if zero_centred else bf16((2048,), generator, 0.1) + 1
    y = handle.rms_norm(x, w, EPS, zero_centred=zero_centred, fallback=False)
    assert ulps(y, N._torch("rms", x, None, None, w, EPS, zero_centred)) <= 1
    alone = handle.rms_norm(x[-1:].clone(), w, EPS, zero_centred=zero_centred, fallback=False)
    assert torch.equal(alone.view(torch.int16), y[-1:].view(torch.int16))
    wide = torch.zeros((tokens, 2048 + 64), dtype=torch.bfloat16, device="cuda")
    wide[:, :2048] = x
    strided = handle.rms_norm(wide[:, :2048], w, EPS, zero_centred=zero_centred, fallback=False)
    assert torch.equal(strided.view(torch.int16), y.view(torch.int16))


@pytest.mark.parametrize("tokens", [1, 64, 512])
def test_add_rms_norm_writes_the_rounded_sum_and_normalizes_it(handle, generator, tokens):
    x, r = bf16((tokens, 2048), generator), bf16((tokens, 2048), generator)
    w = bf16((2048,), generator, 0.1) + 1
    want_r = (x.float() + r.float()).to(torch.bfloat16)
    y = handle.add_rms_norm(x, r, w, EPS, fallback=False)
    assert torch.equal(r.view(torch.int16), want_r.view(torch.int16))
    assert torch.equal(y.view(torch.int16), handle.rms_norm(want_r, w, EPS, fallback=False).view(torch.int16))


@pytest.mark.parametrize("tokens", [1, 64, 300])
def test_gated_rms_norm_within_one_step_of_torch(handle, generator, tokens):
    o = bf16((tokens, 4096), generator)
    zz = torch.empty((tokens, 3 * 4096), dtype=torch.bfloat16, device="cuda")
    zz[:, 4096:8192] = bf16((tokens, 4096), generator, 2.0)
    z = zz[:, 4096:8192]  # z through its own stride, no copy
    w = bf16((128,), generator, 0.1) + 1
    y = handle.gated_rms_norm(o, z, w, EPS, fallback=False)
    assert ulps(y, N._torch("gated", o, None, z, w, EPS, False)) <= 1


@pytest.mark.parametrize("kind", ["rms", "add", "gated"])
def test_fp8_output_is_the_quantized_bf16_output(handle, generator, kind):
    tokens, c = 33, 4096 if kind == "gated" else 2048
    x, r, z = bf16((tokens, c), generator), bf16((tokens, c), generator), bf16((tokens, c), generator)
    w = bf16((128 if kind == "gated" else 2048,), generator, 0.1) + 1
    r2 = r.clone()
    if kind == "rms":
        y = handle.rms_norm(x, w, EPS, fallback=False)
        q, s = handle.rms_norm(x, w, EPS, fp8_out=True, fallback=False)
    elif kind == "add":
        y = handle.add_rms_norm(x, r, w, EPS, fallback=False)
        q, s = handle.add_rms_norm(x, r2, w, EPS, fp8_out=True, fallback=False)
    else:
        y = handle.gated_rms_norm(x, z, w, EPS, fallback=False)
        q, s = handle.gated_rms_norm(x, z, w, EPS, fp8_out=True, fallback=False)
    want_q, want_s = N._quantized(y)
    assert torch.equal(s, want_s)
    deq, want = q.float().view(tokens, -1, 128) * s.unsqueeze(-1), want_q.float().view(tokens, -1, 128) * want_s.unsqueeze(-1)
    assert bool(((deq - want).abs() <= 0.125 * want.abs() + want_s.unsqueeze(-1) * 2.0 ** -9).all())


def test_declined_calls_fall_back_to_torch(handle, generator):
    x = torch.randn((4, 2048), device="cuda", generator=generator)  # float32: not netra's call
    w = torch.ones(2048, device="cuda")
    y = handle.rms_norm(x, w, EPS, out=torch.empty((4, 2048), device="cuda"))
    assert torch.allclose(y, x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + EPS), rtol=1e-2, atol=1e-2)
    with pytest.raises(NetraError) as e:
        handle.rms_norm(x, w, EPS, out=torch.empty((4, 2048), device="cuda"), fallback=False)
    assert e.value.status == Status.NOT_SUPPORTED


def test_refusals_inside_the_domain_raise_and_write_nothing(handle, generator):
    wide = bf16((4, 2048 + 8), generator)
    w = bf16((2048,), generator) + 1
    out = torch.full((4, 2048), 7.0, dtype=torch.bfloat16, device="cuda")
    cases = [
        lambda: handle.rms_norm(wide[:, 1:2049], w, EPS, out=out),                        # misaligned rows
        lambda: handle.rms_norm(wide[:, :2048], w, EPS, out=torch.empty((3, 2048), dtype=torch.bfloat16, device="cuda")),  # too small
        lambda: handle.rms_norm(wide[:, :2048], w[:1024], EPS, out=out),                   # weight
        lambda: handle.rms_norm(wide[:, :2048], w, 0.0, out=out),                          # eps
        lambda: handle.rms_norm(wide[:, :2048], w, EPS, fp8_out=True, scales=torch.empty((4, 8), device="cuda")),  # scales too small
    ]
    for case in cases:
        with pytest.raises(NetraError) as e:
            case()
        assert e.value.status == Status.INVALID_ARGUMENT
    torch.cuda.synchronize()
    assert bool((out == 7.0).all())
    assert "netra::contracts::norm<" in handle.explain("rms", wide[:, :2048], w, EPS, out=out)


def test_graph_capture_replays_with_changing_inputs(handle, generator):
    x, r = bf16((8, 2048), generator), bf16((8, 2048), generator)
    w = bf16((2048,), generator, 0.1) + 1
    out = torch.empty((8, 2048), dtype=torch.bfloat16, device="cuda")
    handle.add_rms_norm(x, r.clone(), w, EPS, out=out, fallback=False)  # warm
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        handle.add_rms_norm(x, r, w, EPS, out=out, fallback=False)
    for step in range(20):
        x.copy_(bf16((8, 2048), generator))
        r_before = r.clone()
        g.replay()
        torch.cuda.synchronize()
        want_r = (x.float() + r_before.float()).to(torch.bfloat16)
        assert torch.equal(r.view(torch.int16), want_r.view(torch.int16)), step
        assert torch.equal(out.view(torch.int16), handle.rms_norm(want_r, w, EPS, fallback=False).view(torch.int16)), step


def test_module_functions_and_export():
    assert netra.rms_norm is N.rms_norm and netra.Norm is N.Norm
