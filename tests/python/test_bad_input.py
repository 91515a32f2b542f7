"""Bad input through netra's Python package on the GPU, as a new user would pass it: tensors go to
libnetra as DLTensors built from their metadata and each contract refuses what it does not take —
a wrong dtype of any tensor, a row-strided view where compact rows are needed, an output of half
the size the call needs, W13 without the shared expert's slice — with NetraError naming the
tensor and its value, nothing written (outputs stay poisoned, memory after them too, the CUDA
context stays usable). act_quant's torch fallback writes the caller's out / scales, also inside
a captured graph."""
import pytest

torch = pytest.importorskip("torch", reason="netra-python-tests skipped: torch is not installed")
import netra  # noqa: E402
from netra.moe_routing import act_quant_torch  # noqa: E402

POISON = -7.0


@pytest.fixture(scope="module")
def experts():
    return netra.MoeExperts()


@pytest.fixture(scope="module")
def routing():
    return netra.MoeRouting()


@pytest.fixture(scope="module")
def weights():
    z = dict(device="cuda")
    return {"w13": torch.zeros(257, 1024, 2048, dtype=torch.uint8, **z).view(torch.float8_e4m3fn),
            "s13": torch.full((257, 8, 16), 1e-3, **z),
            "w2": torch.zeros(257, 2048, 512, dtype=torch.uint8, **z).view(torch.float8_e4m3fn),
            "s2": torch.full((257, 16, 4), 1e-3, **z)}


def ids_for(m):
    ids = torch.arange(m * 9, dtype=torch.int32, device="cuda").view(m, 9) % 256
    ids[:, 8] = 256
    return ids


def refused(call, *texts):
    with pytest.raises(netra.NetraError) as e:
        call()
    assert e.value.status == netra.Status.INVALID_ARGUMENT, str(e.value)
    for text in texts:
        assert text in str(e.value)


def test_gate_up_refuses_every_bad_tensor(experts, weights):
    m = 2
    h = torch.randn(m, 2048, device="cuda").to(torch.bfloat16)
    buffer = torch.full((2 * 9 * m, 1024), POISON, dtype=torch.bfloat16, device="cuda")
    out = buffer[:9 * m]
    w13, s13 = weights["w13"], weights["s13"]
    refused(lambda: experts.gate_up(h.float(), ids_for(m), w13, s13, out), "'hidden': requires bfloat16, got float32")
    refused(lambda: experts.gate_up(h.half(), ids_for(m), w13, s13, out), "got float16")
    wide = torch.zeros(m, 4096, dtype=torch.bfloat16, device="cuda")[:, :2048]
    refused(lambda: experts.gate_up(wide, ids_for(m), w13, s13, out), "'hidden': requires compact row-major strides, got strides [4096, 1]")
    refused(lambda: experts.gate_up(h, ids_for(m).long(), w13, s13, out), "'ids': requires int32, got int64")
    refused(lambda: experts.gate_up(h, ids_for(m), w13[:256], s13, out), "'w13'", "got shape [256, 1024, 2048]")
    refused(lambda: experts.gate_up(h, ids_for(m), w13, s13[:256], out), "'s13'")
    refused(lambda: experts.gate_up(h, ids_for(m), w13, s13, buffer[:9 * m // 2]), "'out'", "got shape [9, 1024]")
    refused(lambda: experts.gate_up(h, ids_for(m), w13.view(torch.int8), s13, out), "'w13'", "got int8")
    torch.cuda.synchronize()
    assert bool((buffer == POISON).all())  # nothing written, nothing past the views either
    experts.gate_up(h, ids_for(m), w13, s13, out)  # the context is healthy; uint8-backed E4M3 weights are taken
    torch.cuda.synchronize()
    assert bool((buffer[9 * m:] == POISON).all())


def test_down_refuses_every_bad_tensor(experts, routing, weights):
    m = 2
    gu = torch.randn(9 * m, 1024, device="cuda").to(torch.bfloat16)
    q, s = routing.act_quant(gu, fallback=False)
    rw = torch.rand(m, 9, device="cuda")
    buffer = torch.full((2 * m, 2048), POISON, dtype=torch.bfloat16, device="cuda")
    out = buffer[:m]
    w2, s2 = weights["w2"], weights["s2"]
    refused(lambda: experts.down(q.float(), ids_for(m), rw, w2, s2, act_scales=s, out=out), "'act': requires float8_e4m3fn, got float32")
    refused(lambda: experts.down(q, ids_for(m), rw.to(torch.bfloat16), w2, s2, act_scales=s, out=out), "'route_weights'", "got bfloat16")
    refused(lambda: experts.down(q, ids_for(m), rw.double(), w2, s2, act_scales=s, out=out), "got float64")
    refused(lambda: experts.down(q, ids_for(m).long(), rw, w2, s2, act_scales=s, out=out), "'ids': requires int32, got int64")
    refused(lambda: experts.down(q, ids_for(m), rw, w2, s2, act_scales=None, out=out), "'act_scales': requires a tensor, got NULL")
    refused(lambda: experts.down(q, ids_for(m), rw, w2[:256], s2, act_scales=s, out=out), "'w2'", "got shape [256, 2048, 512]")
    refused(lambda: experts.down(q, ids_for(m), rw, w2, s2, act_scales=s, out=buffer[:1]), "'out'", "got shape [1, 2048]")
    refused(lambda: experts.down(q, ids_for(m), rw, w2, s2, act_scales=s.cpu(), out=out), "'act_scales'", "got cpu")
    torch.cuda.synchronize()
    assert bool((buffer == POISON).all())
    experts.down(q, ids_for(m), rw, w2, s2, act_scales=s, out=out)
    torch.cuda.synchronize()
    assert bool((buffer[m:] == POISON).all())


def test_act_quant_refuses_small_outputs_and_writes_nothing(routing):
    x = torch.randn(18, 1024, device="cuda").to(torch.bfloat16)
    values = torch.full((36, 512), 0x55, dtype=torch.uint8, device="cuda")
    scales = torch.full((36, 4), POISON, device="cuda")
    refused(lambda: routing.act_quant(x, values[:9], scales[:18]), "'out': requires shape [rows, 512] = [18, 512], got shape [9, 512]")
    refused(lambda: routing.act_quant(x, values[:18], scales[:9]), "'scales'", "got shape [9, 4]")
    refused(lambda: routing.act_quant(x, values[:18].view(torch.int8), scales[:18]), "'out': requires float8_e4m3fn, got int8")
    torch.cuda.synchronize()
    assert bool((values == 0x55).all()) and bool((scales == POISON).all())
    q, s = routing.act_quant(x, values[:18], scales[:18], fallback=False)  # uint8 holding E4M3 bytes
    assert q.data_ptr() == values.data_ptr() and bool((values[18:] == 0x55).all())


def test_act_quant_fallback_writes_the_callers_buffers_also_in_a_graph(routing):
    rows = 4610  # no tactic: torch runs it
    x = torch.randn(rows, 1024, device="cuda").to(torch.bfloat16)
    out = torch.empty(rows, 512, dtype=torch.float8_e4m3fn, device="cuda")
    scales = torch.empty(rows, 4, device="cuda")
    q, s = routing.act_quant(x, out, scales)
    assert q is out and s is scales
    tq, ts = act_quant_torch(x)
    assert torch.equal(out.view(torch.uint8), tq.view(torch.uint8)) and torch.equal(scales, ts)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        routing.act_quant(x, out, scales)  # warm-up outside capture
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        routing.act_quant(x, out, scales)
    x.copy_(torch.randn(rows, 1024, device="cuda"))
    out.view(torch.uint8).fill_(0)
    graph.replay()
    torch.cuda.synchronize()
    tq, ts = act_quant_torch(x)
    assert torch.equal(out.view(torch.uint8), tq.view(torch.uint8)) and torch.equal(scales, ts)


def test_router_refuses_bad_route_buffers(routing):
    m = 4
    h = torch.randn(m, 2048, device="cuda").to(torch.bfloat16)
    rw = (0.03 * torch.randn(256, 2048, device="cuda")).to(torch.bfloat16)
    ids = torch.full((2 * m, 9), -5, dtype=torch.int32, device="cuda")
    weights = torch.full((m, 9), POISON, device="cuda")
    refused(lambda: routing.router(h, rw, ids[:m // 2], weights), "'route_ids'", "got shape [2, 9]")
    refused(lambda: routing.router(h, rw, ids[:m].long(), weights), "'route_ids': requires int32, got int64")
    refused(lambda: routing.router(h, rw.float(), ids[:m], weights), "'gate_weight': requires bfloat16, got float32")
    refused(lambda: routing.router(h, rw.t().contiguous().t(), ids[:m], weights), "'gate_weight': requires compact row-major strides")
    torch.cuda.synchronize()
    assert bool((ids == -5).all()) and bool((weights == POISON).all())
