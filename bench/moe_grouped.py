"""Grouped MoE experts benchmark on the GPU (issue 29 §3, §4): netra's grouped path for mid and
large batches (plan -> gate_up with act_quant fused -> down per route -> route sum; at M = 768 the
split-K pair and the KParts 1 form) against the torch eager composition of the same math and
torch.compile of it, eager and graph-replayed, with the weight-bytes roofline.

Method (bench/common.py, docs/benchmarks.md): netra is timed by the C++ driver
`netra-bench-moe-grouped` (CUDA events, median per call over 30 bursts; a burst is one call per
layer, 8 layers each with its own 257-expert weights, so every call streams cold weights past the
L2); its call 0 of every M is checked there against the host FP64 oracles on sampled rows. The
torch peers run here on weights of the same shapes (8 layers), timed the same way, and are checked
against an FP64 reference on sampled rows under the contracts' policy. Roofline: distinct experts
hit x weight bytes (3 MiB per expert for the whole experts path, 2 MiB gate_up, 1 MiB down) over
the copy bandwidth measured in this run.

torch peers (exact FP32 arithmetic on dequantized operands, graph-capturable: no host syncs):
routes grouped by a stable sort into a [257, M, K] padded batch, one bmm against all 257 experts'
dequantized weights, gathered back; act_quant as netra.moe_routing.act_quant_torch.

Results: the records of the moe family (bench/results/moe_h200.json, beside bench/moe_block.py's and
bench/moe_routing.py's: each script replaces only its own contracts' records).

usage: python3 bench/moe_grouped.py --netra-bench BUILD/tests/netra-bench-moe-grouped [--out FILE]
           [--tokens 32,64,96,128,256,768] [--configs mid_ring,mid_ring2,..] [--compile-tokens 64] [--time-budget 170]
       (--tokens: the driver's M and the peers'; a run replaces only the records of its (stage, M, configuration))
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

import torch

ROOT = __file__.rsplit("/bench/", 1)[0]
sys.path.insert(0, ROOT)
sys.path.insert(0, ROOT + "/python")
from bench import common  # noqa: E402

try:  # the exact torch quantizations of the contracts (the peers need them; netra's records do not)
    from netra.moe_experts import quantize_hidden  # noqa: E402
    from netra.moe_routing import act_quant_torch  # noqa: E402
except Exception as e:  # noqa: BLE001
    quantize_hidden = act_quant_torch = None
    print(f"torch peers unavailable: {e!r}", file=sys.stderr)

MIB = 1 << 20
LAYERS = 8
POLICY = ("bounded: |out - ref| <= 2^-8 |ref| + 2^-15 E + 2^-120 vs the FP64 reference of the dequantized math (split-K: "
          "2^-8 |ref| + 2^-10 E + 2^-23 W + 2^-120), sampled rows of call 0")
METHOD = ("median per call over 30 bursts of one call per layer (8 layers, each its own 257-expert weights); graph = burst captured "
          "once and replayed")
TARGET_FACTOR = {64: 1.10, 128: 1.10, 768: 1.25}
TRITON_GEMMS_US = {64: 185.0, 128: 208.0, 768: 266.0}  # the tuned Triton fused_moe on this GPU, GEMMs alone


def make_layers(device):
    g = torch.Generator(device=device).manual_seed(5)
    out = []
    for _ in range(LAYERS):
        def e4m3(*shape):
            b = torch.randint(0, 256, shape, dtype=torch.uint8, device=device, generator=g)
            b = torch.where((b & 0x7F) == 0x7F, b ^ 1, b)  # finite
            return b.view(torch.float8_e4m3fn)
        w13, w2 = e4m3(257, 1024, 2048), e4m3(257, 2048, 512)
        s13 = torch.rand(257, 8, 16, device=device, generator=g) * 4e-3 + 1e-4
        s2 = torch.rand(257, 16, 4, device=device, generator=g) * 4e-3 + 1e-4
        out.append((w13, s13, w2, s2))
    return out


def positions(ids):
    """Rank of each route inside its expert (stable), without host syncs."""
    e = ids.reshape(-1).long()
    order = torch.argsort(e, stable=True)
    counts = torch.zeros(257, dtype=torch.long, device=e.device).scatter_add_(0, e, torch.ones_like(e))
    starts = torch.cumsum(counts, 0) - counts
    rank = torch.empty_like(e)
    rank[order] = torch.arange(e.numel(), device=e.device) - starts[e[order]]
    return e, rank


def grouped_bmm(rows, e, rank, wdq, m):
    """rows [R, K] fp32 grouped per expert into [257, M, K], times wdq [257, N, K]^T, gathered back [R, N]."""
    pad = torch.zeros(257, m, rows.shape[1], dtype=torch.float32, device=rows.device)
    pad[e, rank] = rows
    return torch.bmm(pad, wdq.transpose(1, 2))[e, rank]


def gate_up_peer(hidden, ids, w13, s13):
    m = hidden.shape[0]
    q, sx = quantize_hidden(hidden)
    x = (q.float().view(m, 16, 128) * sx.view(m, 16, 1)).view(m, 2048)
    e, rank = positions(ids)
    wdq = (w13.float().view(257, 8, 128, 16, 128) * s13.view(257, 8, 1, 16, 1)).view(257, 1024, 2048)
    g = grouped_bmm(x[torch.arange(9 * m, device=x.device) // 9], e, rank, wdq, m).to(torch.bfloat16)
    act, scales = act_quant_torch(g)
    return g, act, scales


def down_peer(act, scales, ids, route_weights, w2, s2):
    m = ids.shape[0]
    a = (act.float().view(-1, 4, 128) * scales.view(-1, 4, 1)).view(-1, 512)
    e, rank = positions(ids)
    wdq = (w2.float().view(257, 16, 128, 4, 128) * s2.view(257, 16, 1, 4, 1)).view(257, 2048, 512)
    y = grouped_bmm(a, e, rank, wdq, m).view(m, 9, 2048)
    return (y * route_weights.view(m, 9, 1)).sum(dim=1).to(torch.bfloat16)


def within(got, ref, mag):
    bound = ref.abs() * 2.0 ** -8 + mag * 2.0 ** -15 + 2.0 ** -120
    return bool(((got.double() - ref).abs() <= bound).all())


def check_gate_up(g, hidden, ids, w13, s13, rows):
    m = hidden.shape[0]
    q, sx = quantize_hidden(hidden)
    x = (q.double().view(m, 16, 128) * sx.double().view(m, 16, 1)).view(m, 2048)[torch.arange(9 * m, device=hidden.device) // 9]
    e = ids.reshape(-1).long()
    w = (w13[:, rows].double().view(257, len(rows), 16, 128) * s13[:, rows // 128].double().view(257, len(rows), 16, 1)).view(257, len(rows), 2048)
    prod = w[e] * x.unsqueeze(1)
    return within(g[:, rows], prod.sum(-1), prod.abs().sum(-1))


def check_down(out, act, scales, ids, route_weights, w2, s2, rows):
    m = ids.shape[0]
    a = (act.double().view(-1, 4, 128) * scales.double().view(-1, 4, 1)).view(-1, 512)
    e = ids.reshape(-1).long()
    w = (w2[:, rows].double().view(257, len(rows), 4, 128) * s2[:, rows // 128].double().view(257, len(rows), 4, 1)).view(257, len(rows), 512)
    prod = w[e] * a.unsqueeze(1)
    rw = route_weights.double().view(-1, 1)
    y, ymag = (prod.sum(-1) * rw).view(m, 9, -1).sum(1), (prod.abs().sum(-1) * rw.abs()).view(m, 9, -1).sum(1)
    return within(out[:, rows], y, ymag)


def torch_peers(m, layer_weights, compile_it):
    dev = layer_weights[0][0].device
    g = torch.Generator(device=dev).manual_seed(m)
    hidden = (torch.randn(m, 2048, device=dev, generator=g)).to(torch.bfloat16)
    ids = torch.stack([torch.randperm(256, device=dev, generator=g)[:8] for _ in range(m)]).int()
    ids = torch.cat([ids, torch.full((m, 1), 256, dtype=torch.int32, device=dev)], 1).contiguous()
    rw = (torch.rand(m, 9, device=dev, generator=g) * 0.2 + 0.02).contiguous()
    rows13 = torch.arange(5, 1024, 128, device=dev)
    rows2 = torch.arange(5, 2048, 128, device=dev)
    w13, s13, w2, s2 = layer_weights[0]
    g0, act0, sc0 = gate_up_peer(hidden, ids, w13, s13)
    out0 = down_peer(act0, sc0, ids, rw, w2, s2)
    ok_gu = check_gate_up(g0, hidden, ids, w13, s13, rows13)
    ok_dn = check_down(out0, act0, sc0, ids, rw, w2, s2, rows2)
    peers = {"gate_up": [], "down": []}
    fns = [("torch eager composition", gate_up_peer, down_peer)]
    if compile_it:
        fns.append(("torch.compile of the composition", torch.compile(gate_up_peer), torch.compile(down_peer)))
    for name, gu, dn in fns:
        try:
            peer_times(name, gu, dn, peers, hidden, ids, rw, act0, sc0, layer_weights, ok_gu, ok_dn, rows13, rows2)
        except Exception as e:  # noqa: BLE001  (a compile failure): recorded as no such peer
            print(f"M = {m}: peer {name} failed: {e!r}", file=sys.stderr)
    return peers


def peer_times(name, gu, dn, peers, hidden, ids, rw, act0, sc0, layer_weights, ok_gu, ok_dn, rows13, rows2):
    w13, s13, w2, s2 = layer_weights[0]
    exact_gu, exact_dn = ok_gu, ok_dn
    if gu is not gate_up_peer:
        cg, ca, cs = gu(hidden, ids, w13, s13)
        exact_gu = check_gate_up(cg, hidden, ids, w13, s13, rows13)
        exact_dn = check_down(dn(ca, cs, ids, rw, w2, s2), ca, cs, ids, rw, w2, s2, rows2)
    calls = [lambda l=l: gu(hidden, ids, layer_weights[l][0], layer_weights[l][1]) for l in range(LAYERS)]
    eager, graph = common.bench_eager(calls, reps=5, warmup=1), common.bench_graph(calls, reps=5, warmup=1)
    peers["gate_up"].append({"name": name, "eager_us": eager["median_us"], "graph_us": graph["median_us"], "exact": exact_gu})
    calls = [lambda l=l: dn(act0, sc0, ids, rw, layer_weights[l][2], layer_weights[l][3]) for l in range(LAYERS)]
    eager, graph = common.bench_eager(calls, reps=5, warmup=1), common.bench_graph(calls, reps=5, warmup=1)
    peers["down"].append({"name": name, "eager_us": eager["median_us"], "graph_us": graph["median_us"], "exact": exact_dn})


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--netra-bench", required=True)
    ap.add_argument("--out", default=os.path.join(ROOT, "bench/results/moe_h200.json"))
    ap.add_argument("--tokens", default="32,64,96,128,256,768")
    ap.add_argument("--compile-tokens", default="64")
    ap.add_argument("--time-budget", type=float, default=170.0, help="seconds (after netra's driver) after which no further peer is timed")
    ap.add_argument("--configs", default="", help="the driver's configurations (default: every one that serves each M)")
    a = ap.parse_args()
    bandwidth = common.copy_bandwidth()
    run = subprocess.run([a.netra_bench, a.tokens, a.configs], check=False, capture_output=True, text=True, timeout=600)
    start = time.time()  # the peers' budget starts after netra's driver
    raw = [json.loads(line) for line in run.stdout.splitlines() if line.startswith("{")]
    print(run.stdout, run.stderr[-2000:], sep="\n", file=sys.stderr)
    tokens = [int(t) for t in a.tokens.split(",")]
    compile_tokens = {int(t) for t in a.compile_tokens.split(",") if t}
    layer_weights = make_layers("cuda") if quantize_hidden is not None else None
    peers = {}
    for m in tokens if layer_weights is not None else []:
        if time.time() - start > a.time_budget:
            print(f"time budget spent: no torch peers from M = {m}", file=sys.stderr)
            break
        try:
            peers[m] = torch_peers(m, layer_weights, m in compile_tokens)
        except Exception as e:  # noqa: BLE001  (out of memory at the largest M, a compile failure): recorded as no peer
            print(f"M = {m}: torch peers failed: {e!r}", file=sys.stderr)
        torch.cuda.empty_cache()

    stage_bytes = {"gate_up": 2 * MIB, "plan_gate_up": 2 * MIB, "gate_up_down": 3 * MIB, "down": 1 * MIB, "down_reduce": 1 * MIB, "experts": 3 * MIB}
    contract = {"plan": "moe_grouped_plan", "gate_up": "moe_grouped_gate_up", "down": "moe_grouped_down", "reduce": "moe_grouped_reduce",
                "plan_gate_up": "moe_grouped_plan_gate_up", "gate_up_down": "moe_grouped_gate_up_down",
                "down_reduce": "moe_grouped_down_reduce", "experts": "moe_grouped_experts"}
    records, revision = [], common.environment()["git_revision"]
    for r in raw:
        m, stage = r["tokens"], r["stage"]
        nbytes = stage_bytes.get(stage, 0) * r["distinct_experts"]
        roofline = nbytes / bandwidth * 1e6 if nbytes else None
        rec = {"contract": contract[stage], "instance": r["instance"], "configuration": r["configuration"],
               "shape": {"tokens": m, "distinct_experts": r["distinct_experts"]}, "netra_graph_us": r["graph_us"], "netra_eager_us": r["eager_us"],
               "correct": r["correct"], "comparison": POLICY, "bytes": nbytes or None, "roofline_us": roofline, "floor_us": None,
               "check": {k: r[k] for k in ("gate_up_failures", "gate_up_worst", "down_failures")}, "peers": [], "best_peer": None,
               "best_peer_graph_us": None, "speedup_vs_best_peer": None, "target_us": None, "meets_target": None,
               "revision": revision}
        if roofline:
            rec["graph_over_roofline"] = r["graph_us"] / roofline
        if stage == "experts" and m in TARGET_FACTOR and roofline:
            rec["target_us"] = TARGET_FACTOR[m] * roofline
            rec["meets_target"] = r["graph_us"] <= rec["target_us"]
            rec["note"] = (f"issue target (whole block incl. routing) {TARGET_FACTOR[m]}x roofline; tuned Triton fused_moe GEMMs alone "
                           f"{TRITON_GEMMS_US[m]} us on this GPU (the issue's figure, not measured here)")
        peer_stage = {"gate_up": "gate_up", "down_reduce": "down"}.get(stage)
        if peer_stage and m in peers:
            rec["peers"] = peers[m][peer_stage]
            exact = [p for p in rec["peers"] if p["exact"]]
            if exact:
                best = min(exact, key=lambda p: p["graph_us"])
                rec["best_peer"], rec["best_peer_graph_us"] = best["name"], best["graph_us"]
                rec["speedup_vs_best_peer"] = best["graph_us"] / r["graph_us"]
        records.append(rec)
    # this run's records replace those of the same (stage, M, configuration); the others stay
    measured = {(r["contract"], r["shape"]["tokens"], r["configuration"]) for r in records}
    common.merge_family(a.out, "moe", records, lambda r: (r["contract"], r["shape"].get("tokens"), r.get("configuration")) in measured,
                        bandwidth, METHOD,
                        grouped={"method": METHOD, "copy_bandwidth_bytes_per_s": bandwidth, "environment": common.environment(),
                                 "driver_returncode": run.returncode})
    common.print_table([{"stage": r["contract"], "M": r["shape"]["tokens"], "cfg": r["configuration"], "graph": r["netra_graph_us"],
                         "eager": r["netra_eager_us"], "xroof": r.get("graph_over_roofline"), "ok": r["correct"],
                         "peer": r["best_peer_graph_us"]} for r in records], ["stage", "M", "cfg", "graph", "eager", "xroof", "ok", "peer"])


if __name__ == "__main__":
    main()
