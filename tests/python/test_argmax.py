"""netra.argmax against torch.argmax on the GPU: the embedded reference tactic and the
JIT-compiled 32768-logit tactic, strided rows, torch's current stream, the fallback for shapes
netra declines, the strict refusal inside the promoted domain, and a torch.cuda.CUDAGraph
replayed 1000 times with changing inputs."""
import pytest

torch = pytest.importorskip("torch", reason="netra-python-tests skipped: torch is not installed")
import netra  # noqa: E402  (conftest puts python/ on the path)

REFERENCE = 248320  # the article's vocabulary: embedded tactic, strict for rows 1..128
SMALL = 32768       # JIT-compiled tactic, rows 1..8


def adversarial(rows, cols, generator):
    """Random rows with the cases torch.argmax is particular about: NaNs, ties, infinities, zeros."""
    x = torch.randn(rows, cols, device="cuda", generator=generator)
    kinds = torch.randint(0, 6, (rows,), generator=generator, device="cuda").tolist()
    for r, kind in enumerate(kinds):
        at = torch.randint(0, cols, (4,), generator=generator, device="cuda")
        if kind == 1:
            x[r, at] = float("nan")
        elif kind == 2:
            x[r, at] = 7.5  # ties: the first index wins
        elif kind == 3:
            x[r].fill_(float("-inf"))
        elif kind == 4:
            x[r] = torch.where(torch.rand(cols, device="cuda", generator=generator) < 0.5, 0.0, -0.0)
        elif kind == 5:
            x[r, at] = float("inf")
    return x


@pytest.fixture(scope="module")
def generator():
    return torch.Generator(device="cuda").manual_seed(1234)


@pytest.fixture(scope="module")
def handle():
    return netra.Argmax()


@pytest.mark.parametrize("rows", [1, 2, 16, 127, 128])
def test_reference_tactic_equals_torch(handle, generator, rows):
    x = adversarial(rows, REFERENCE, generator)
    got = handle(x, fallback=False)
    assert torch.equal(got, torch.argmax(x, dim=-1)), handle.explain(x)


@pytest.mark.parametrize("rows", [1, 5, 8])
def test_jit_tactic_equals_torch(handle, generator, rows):
    x = adversarial(rows, SMALL, generator)
    got = handle(x, fallback=False)
    assert torch.equal(got, torch.argmax(x, dim=-1)), handle.explain(x)


def test_strided_rows_and_out(handle, generator):
    wide = adversarial(6, REFERENCE + 64, generator)
    x = wide[:, :REFERENCE]
    out = torch.full((6,), -1, dtype=torch.int64, device="cuda")
    assert handle(x, out, fallback=False) is out
    assert torch.equal(out, torch.argmax(x, dim=-1))


def test_runs_on_the_current_stream(handle, generator):
    x = adversarial(4, REFERENCE, generator)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        got = handle(x, fallback=False)
    side.synchronize()
    assert torch.equal(got, torch.argmax(x, dim=-1))


def test_declined_calls_fall_back_to_torch(handle, generator):
    for x in (adversarial(3, 1000, generator), adversarial(200, REFERENCE, generator)[:, :],
              adversarial(9, SMALL, generator), adversarial(2, SMALL, generator).double(), torch.randn(3, 50)):
        assert torch.equal(netra.argmax(x), torch.argmax(x, dim=-1))
    with pytest.raises(netra.NetraError) as declined:
        handle(adversarial(3, 1000, generator), fallback=False)
    assert declined.value.status == netra.Status.NOT_SUPPORTED
    assert "fallback" in handle.explain(adversarial(3, 1000, generator))


def test_strict_tactic_refuses_a_misaligned_view_in_its_domain(handle, generator):
    wide = adversarial(4, REFERENCE + 1, generator)
    x = wide[:, 1:]  # 248320 columns, rows 4 bytes off their 16-byte alignment
    with pytest.raises(netra.NetraError) as refused:
        handle(x)
    assert refused.value.status == netra.Status.INVALID_ARGUMENT
    assert "strict in its promoted domain" in str(refused.value)


def test_cuda_graph_replays_1000_times_with_changing_inputs(handle, generator):
    big = torch.empty(16, REFERENCE, device="cuda")
    small = torch.empty(8, SMALL, device="cuda")
    big_out = torch.empty(16, dtype=torch.int64, device="cuda")
    small_out = torch.empty(8, dtype=torch.int64, device="cuda")
    big.copy_(adversarial(16, REFERENCE, generator))
    small.copy_(adversarial(8, SMALL, generator))
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm-up outside capture, as torch recommends
        handle(big, big_out, fallback=False)
        handle(small, small_out, fallback=False)
    torch.cuda.current_stream().wait_stream(side)

    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        handle(big, big_out, fallback=False)
        handle(small, small_out, fallback=False)

    for replay in range(1000):
        big.copy_(adversarial(16, REFERENCE, generator))
        small.copy_(adversarial(8, SMALL, generator))
        big_out.fill_(-1)
        small_out.fill_(-1)
        graph.replay()
        assert torch.equal(big_out, torch.argmax(big, dim=-1)), f"replay {replay}"
        assert torch.equal(small_out, torch.argmax(small, dim=-1)), f"replay {replay}"


def test_a_handle_cannot_be_created_during_capture():
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        with pytest.raises(netra.NetraError) as refused:
            netra.Argmax()
        torch.zeros(1, device="cuda").add_(1)  # keep the graph non-empty
    assert "before graph capture" in str(refused.value)


def test_bad_tensors_are_refused_by_the_contract_and_write_nothing(handle, generator):
    x = adversarial(4, REFERENCE, generator)
    for out, text in ((torch.full((2,), -1, dtype=torch.int64, device="cuda"), "requires shape [rows] = [4], got shape [2]"),
                      (torch.full((4,), -1, dtype=torch.int32, device="cuda"), "requires int64, got int32"),
                      (torch.full((8,), -1, dtype=torch.int64, device="cuda")[::2], "got strides [2]"),
                      (torch.full((4,), -1, dtype=torch.int64), "got cpu")):
        with pytest.raises(netra.NetraError) as refused:
            handle(x, out)
        assert refused.value.status == netra.Status.INVALID_ARGUMENT
        assert text in str(refused.value)
        assert bool((out == -1).all())  # nothing written
    columns = adversarial(REFERENCE, 4, generator).t()  # rows not contiguous
    with pytest.raises(netra.NetraError) as refused:
        handle(columns)
    assert "contiguous rows (last stride 1)" in str(refused.value)
    # Not the contract's element type or device: not its call, torch runs it.
    assert torch.equal(handle(x.double()), torch.argmax(x, dim=-1))
    with pytest.raises(netra.NetraError) as declined:
        handle(x.half(), fallback=False)
    assert declined.value.status == netra.Status.NOT_SUPPORTED
    assert "logits float16 shape [4, 248320]" in str(declined.value)
