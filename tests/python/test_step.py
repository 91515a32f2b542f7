"""The 4-layer synthetic Qwen3.6-35B-A3B step (netra.step) on the GPU: decode at a padded bucket and
verify + commit, netra's path against the pure torch path (relative logit error within 2^-4, every
greedy disagreement explained by the logit error, netra's argmax exact on its own logits), eager
equal to graph replay bit for bit, padded rows and requests outside the batch untouched in the
pools, the coverage of each op (netra serves what its tactics admit: attention (decode up to 128
requests), norms, MoE block up to 16 tokens, argmax up to 128 rows, the GDN decode at one token
per request), a decode bucket past 64 (the widened GQA8 decode, the GDN decode at B = 80) and a
verify commit equal to a recomputation of exactly the accepted prefix."""
import pytest

torch = pytest.importorskip("torch", reason="netra-python-tests skipped: torch is not installed")
import netra.torch_ops as ops  # noqa: E402  (conftest puts python/ on the path)
from netra import gdn as _gdn  # noqa: E402
from netra.step import model, plan  # noqa: E402

LOGIT_BOUND = 2.0 ** -4  # relative L2 error of the logits, 4 layers (see docs/step-coverage.md and bench/step.py)


@pytest.fixture(scope="module")
def world():
    ops.prepare()
    cfg = plan.TEST_CONFIG
    mode, _ = model.probe_dense_mode("cuda")
    w = model.Weights(cfg, "cuda", seed=3, dense_mode=mode)
    p = model.Pools(cfg, "cuda", requests=8, kv_len=300, seed=4)
    return cfg, w, p


def _compare(cfg, net, ref):
    return float((net.double() - ref.double()).norm() / ref.double().norm())


def _run(step, batch, pools, snap):
    pools.restore(snap)
    logits, tokens = step(batch)
    torch.cuda.synchronize()
    return logits.clone(), tokens.clone()


def _decode(world, bucket, live, context, seed, must_serve):
    """One eager netra decode step of the `live` requests padded to `bucket`, recording what served
    each op (every op in `must_serve` by netra); only the live requests' GDN slots (state and conv
    history) change, every other slot and the sentinel stays. Returns (batch, snapshot, the torch
    path's step, logits, tokens)."""
    cfg, w, p = world
    batch = model.Batch(p, "decode", bucket)
    g = torch.Generator().manual_seed(seed)
    batch.set(live, torch.randint(0, cfg.vocab, (len(live),), generator=g).tolist(), context)
    snap = p.snapshot()
    net, ref = model.Step(w, p), model.Step(w, p, {f: "torch" for f in model.FAMILIES})
    ops.reset_counts()
    with ops.recording() as rows:
        ln, tn = _run(net, batch, p, snap)
    served = {r["op"]: r["served"] for r in rows}
    for op in must_serve:
        assert served[op] == "netra", (op, [r for r in rows if r["op"] == op][:1])
    touched = set(p.gdn_slot[live].tolist())
    for s, saved, c in zip(p.state, snap[1], p.conv):
        if s is not None:
            for slot in range(s.shape[0]):
                same = torch.equal(s[slot], saved[0][slot]) and torch.equal(c[slot], saved[1][slot])
                assert same == (slot not in touched), slot  # live slots advance; others and the sentinel stay
    return batch, snap, net, ref, ln, tn


def test_decode_bucket_netra_vs_torch_eager_vs_graph(world):
    cfg, _, p = world
    assert plan.bucket_for(3) == 4
    batch, snap, net, ref, ln, tn = _decode(world, 4, [5, 0, 2], [300, 17, 151], 5,
                                            ("rms_norm", "add_rms_norm", "gated_rms_norm", "attention_gqa8", "moe_block", "argmax",
                                             "gdn_conv", "gdn_precompute", "gdn_m16"))
    assert not any(ops.fallback_counts().values()), ops.fallback_counts()
    after = [s.clone() if s is not None else None for s in p.state]
    lr, tr = _run(ref, batch, p, snap)
    live = slice(0, 3)
    assert torch.equal(tn[live], torch.argmax(ln[live], dim=-1))  # netra's argmax is exact on its logits
    assert _compare(cfg, ln[live], lr[live]) <= LOGIT_BOUND
    for r in range(3):
        if tn[r] != tr[r]:
            margin = float(lr[r, tr[r]] - lr[r, tn[r]])
            assert margin <= 2 * float((ln[r] - lr[r]).abs().max())
    graph, gl, gt, _ = model.capture(net, batch)
    p.restore(snap)
    graph.replay()
    torch.cuda.synchronize()
    assert torch.equal(gl[live], ln[live]) and torch.equal(gt[live], tn[live])
    for s, a in zip(p.state, after):
        assert s is None or torch.equal(s, a)
    p.restore(snap)


def test_verify_commit_is_the_accepted_prefix(world):
    cfg, w, p = world
    batch = model.Batch(p, "verify", 4)
    accepted = [3, 12, 1]
    batch.set([1, 6, 3], list(range(100, 136)), [40, 200, 288], accepted=accepted)
    snap = p.snapshot()
    net = model.Step(w, p)
    net.keep = []
    ops.reset_counts()
    with ops.recording() as rows:
        logits, tokens = _run(net, batch, p, snap)
    served = {r["op"]: r["served"] for r in rows}
    for op in ("gdn_conv", "gdn_precompute", "gdn_verify", "gdn_replay", "attention_gqa8", "argmax"):
        assert served[op] == "netra", op
    assert torch.equal(tokens[:36], torch.argmax(logits[:36], dim=-1))
    # layer 0 is GDN: its committed state is the torch recurrence over exactly the accepted tokens
    gdn_layers = [i for i, kind in enumerate(cfg.layer_kinds()) if kind == "gdn"]
    i = gdn_layers[0]
    q, k, y, decay, beta, windows = [t for t in net.keep if isinstance(t, tuple)][0]
    slots = p.gdn_slot[[1, 6, 3]].long()
    acc = torch.tensor(accepted + [0], dtype=torch.int32, device="cuda")
    _, want = _gdn.recurrent_torch(q, k, y, decay, beta, snap[1][i][0][torch.cat([slots, slots[:1]])], 12, accepted=acc, outputs=False)
    got = p.state[i][slots]
    assert float((got - want[:3]).abs().max()) <= 1e-4 * float(want[:3].abs().max()) + 1e-6
    for j, a in enumerate(accepted):
        assert torch.equal(p.conv[i][slots[j]], windows[j, a - 1])
    assert torch.equal(p.state[i][p.gdn_sentinel], snap[1][i][0][p.gdn_sentinel])
    net.keep = None
    graph, gl, gt, _ = model.capture(net, batch)
    p.restore(snap)
    graph.replay()
    torch.cuda.synchronize()
    assert torch.equal(gl[:36], logits[:36]) and torch.equal(p.state[i][slots], got)
    p.restore(snap)


def test_decode_bucket_80_is_served_by_netra(world):
    """B = 80 (3 live rows, 77 padded on the sentinels): attention through the widened GQA8 decode,
    the GDN decode at one token per request; logits within the bound of the torch path, the
    pools' real slots advance and every other slot (the sentinel included) stays."""
    cfg, _, p = world
    assert plan.bucket_for(70) == 80
    batch, snap, _, ref, ln, _ = _decode(world, 80, [4, 1, 7], [120, 299, 5], 9, ("attention_gqa8", "gdn_conv", "gdn_precompute", "gdn_m16", "argmax"))
    lr, _ = _run(ref, batch, p, snap)
    assert _compare(cfg, ln[:3], lr[:3]) <= LOGIT_BOUND
    p.restore(snap)
