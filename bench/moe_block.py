"""MoE block benchmark on the GPU (issue 4 §4/§5, issue 29): netra's whole block (router -> shared
gate -> gate_up -> [act_quant] -> down, one stream, programmatic dependent launch; 17..768 tokens
the grouped experts) for M in 1..768, and the decode expert kernels alone (M <= 16), against the
torch composition of the same math (eager, in a CUDA graph, and torch.compile of it) and a Triton
grouped block-scaled GEMM of the two expert projections (bench/moe_triton.py, both matrix forms: the
GEMMs alone beside the block at every M, and each stage alone at M <= 16), graph-replayed and eager,
with the weight-bytes roofline. The grouped stages alone are bench/moe_grouped.py's
records and the routers bench/moe_routing.py's (the same results file).

Method (bench/common.py, docs/benchmarks.md): CUDA events, median per call over 30 bursts; a burst
is one call per "layer", LAYERS layers each with its own 257-expert weights (771 MB each), so
every call streams cold weights (no call finds the previous call's experts in the 60 MB L2). The
roofline of a call is the bytes it must read once: 3 MiB per distinct expert it routes to (2 MiB
W13 + 1 MiB W2, 9 experts at M = 1), the router weight (1 MiB) and the small tensors, over the
measured device-to-device copy bandwidth. The hidden states are seeded per token count, so every run
routes the same tokens to the same experts (and has the same roofline).

Exactness: for the first call of every M, netra's gate_up and down outputs (given netra's own
route metadata and act_quant output; above 16 tokens the block's optional gate_up output is given
for that call only) and the torch peers' outputs on the same inputs are checked against the FP64
reference of the dequantized math under the contracts' policy (|out - ref| <= 2^-8 |ref| + 2^-15 E
+ 2^-120, NaN where the reference is NaN; on the H200 every M takes a KParts 1 configuration,
tactics/moe_grouped.hpp). A peer that fails is reported as inexact. The torch peers gather FP32 weights per
route (9M x 8 MiB for gate_up), so they run up to --peer-max-tokens (128).

Targets (H200, graph-replayed, issue 29): block M = 1 <= 13 us; M = 16 <= 1.15 x its roofline;
M = 64 and 128 <= 1.10 x; M = 768 <= 1.25 x.

Run time: torch.compile is the slowest part (the block, gate_up and down each compiled once per
token count in --compile-tokens: 1 by default). The per-kernel peers (torch and, at the compile
token counts, torch.compile of gate_up and down) are timed eager and graph-replayed and checked
against the policy on call 0 with netra's route metadata and act_quant output. Each M records
its wall time (wall_s).

Results (bench/schema.py): per M, records of the moe family for the whole block (`moe_block`),
gate_up alone (`moe_expert_gate_up`) and down alone (`moe_expert_down`), written into FILE beside
bench/moe_routing.py's records (each script keeps the other's). The block's floor is the structure
floor's best structure at that M (bench/results/evidence/moe_decode_structure_floor_h200.json,
--structure-floor), where it was measured.

usage: python3 bench/moe_block.py [--out FILE] [--layers 8] [--tokens 1,2,4,8,16,32,64,96,128,256,768] [--compile-tokens 1]
           [--peer-max-tokens 128] [--structure-floor FILE] [--grouped-floor FILE]
       (libnetra: $NETRA_LIBRARY or the newest build*/libnetra.so of this tree)
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time

import torch

ROOT = __file__.rsplit("/bench/", 1)[0]
sys.path.insert(0, ROOT)
sys.path.insert(0, ROOT + "/python")
from bench import common, moe_triton  # noqa: E402
from netra.moe_routing import act_quant_torch, router_torch, shared_gate_torch  # noqa: E402
from netra.moe_experts import MoeBlock, MoeExperts, down_torch, gate_up_torch, quantize_hidden  # noqa: E402

MIB = 1 << 20
BLOCK_M1_TARGET_US = 13.0
BLOCK_ROOFLINE_FACTOR = {16: 1.15, 64: 1.10, 128: 1.10, 768: 1.25}
TRITON_FORMS = {"bf16": "Triton grouped block-scaled GEMM (bench/moe_triton.py; BF16 tl.dot on the widened E4M3 operands)",
                "fp8": "Triton grouped block-scaled GEMM (bench/moe_triton.py; FP8 tl.dot)"}
POLICY = "bounded: |out - ref| <= 2^-8 |ref| + 2^-15 E + 2^-120 against the FP64 reference of the dequantized math (NaN where it is NaN), call 0"
BLOCK_INSTANCE = ("netra.MoeBlock (router -> gate_up -> act_quant -> down; 17..768 tokens router -> grouped plan, gate_up + act_quant, "
                  "down, route sum; programmatic dependent launch)")
BLOCK_METHOD = ("median per call over 30 bursts of one call per layer; every layer has its own 257-expert weights; graph = burst "
                "captured once and replayed; hidden states seeded per M (the same routes in every run)")
CONTRACTS = ("moe_block", "moe_expert_gate_up", "moe_expert_down")


def structure_floors(path: str | None, structures: tuple[str, ...]) -> dict:
    """The best of `structures` per M of a floor file (no arithmetic), where it was measured."""
    if not path or not os.path.exists(path):
        return {}
    with open(path) as f:
        d = json.load(f)
    best = {}
    for r in d["records"]:
        if r["structure"] in structures:
            best[r["tokens"]] = min(best.get(r["tokens"], math.inf), r["graph_us"])
    return best


def schema_records(raw: list[dict], bandwidth: float, floors: dict) -> list[dict]:
    """Each M's measurements as three records (the block, gate_up alone, down alone). correct: netra's
    gate_up and down outputs of call 0 within the policy; a peer is exact when its own output of call
    0 (given netra's route metadata and act_quant output) is."""
    out = []
    def timed(r, k):
        v = r.get(k) or {}
        return v.get("graph_us"), v.get("eager_us")
    def checked(r, k):
        c = r.get("check_" + k)
        return None if c is None else c["failures"] == 0
    def peers(r, stage):
        ps = []
        if stage == "block":  # the comparison: the Triton GEMMs alone, beside the whole block
            for form in TRITON_FORMS:
                g, e = timed(r, f"triton_{form}_gemms")
                if g is not None:
                    bad = [f"{st} {r[f'check_triton_{form}_{st}']['failures']} of {r[f'check_triton_{form}_{st}']['elements']}"
                           for st in ("gate_up", "down") if r[f"check_triton_{form}_{st}"]["failures"]]
                    ps.append(common.peer(TRITON_FORMS[form] + " (gate_up + down alone)", g, False, e,
                                          "the two GEMMs alone with netra's route metadata and act_quant output and the hidden states "
                                          "quantized beforehand (no router, shared gate, quantization or activation; the route sum in "
                                          "torch), not the block; elements outside the policy: "
                                          + (", ".join(bad) if bad else "none")))
        for who, name in (("torch", "torch (eager composition)"), ("compile", "torch.compile"),
                          *((f"triton_{form}", label) for form, label in TRITON_FORMS.items())):
            g, e = timed(r, f"{who}_{stage}")
            if g is None:
                continue
            if stage == "block":
                ps.append(common.peer(name + " of the block", g, False, e, "not checked against the policy as a whole (its routing is "
                                      "torch's, not the contract's bits)"))
            else:
                ok = bool(checked(r, f"{who}_{stage}"))
                c = r[f"check_{who}_{stage}"]
                ps.append(common.peer(name, g, ok, e, None if ok else f"{c['failures']} of {c['elements']} elements outside the policy"))
        return ps
    for r in raw:
        m, distinct = r["tokens"], r["distinct_experts_per_call"]
        shape = {"tokens": m}
        ok_gate_up, ok_down = checked(r, "netra_gate_up"), checked(r, "netra_down")
        both = None if ok_gate_up is None or ok_down is None else ok_gate_up and ok_down
        g, e = timed(r, "netra_block")
        extra = {"distinct_experts": distinct, "layers": r["layers"], "wall_s": r.get("wall_s"),
                 "checks": {k: r.get("check_netra_" + k) for k in ("gate_up", "down")}, "revision": r.get("revision")}
        if "netra_block_fused" in r:
            extra["fused_down"] = r["netra_block_fused"]
            extra["fused_equals_unfused"] = r.get("fused_equals_unfused")
        target = BLOCK_M1_TARGET_US if m == 1 else (BLOCK_ROOFLINE_FACTOR[m] * r["roofline_us"] if m in BLOCK_ROOFLINE_FACTOR else None)
        out.append(common.record("moe_block", BLOCK_INSTANCE, shape, g, e, both, POLICY + " (gate_up and down)", peers(r, "block"),
                                 r["weight_bytes_per_call"], None, floor_us=floors.get(m), target_us=target,
                                 roofline_us=r["roofline_us"], **extra))
        # compulsory bytes of each stage alone: its experts' weights and block scales, its inputs read and outputs written once
        gate_up_bytes = distinct * (2 * MIB + 8 * 16 * 4) + m * 2048 * 2 + 9 * m * 1024 * 2 + 9 * m * 8
        down_bytes = distinct * (1 * MIB + 16 * 4 * 4) + 9 * m * (512 + 16 + 8) + m * 2048 * 2
        for stage, contract, nbytes, ok in (("gate_up", "moe_expert_gate_up", gate_up_bytes, ok_gate_up),
                                            ("down", "moe_expert_down", down_bytes, ok_down)):
            if f"netra_{stage}" not in r:  # above 16 tokens: the grouped stages (bench/moe_grouped.py's records)
                continue
            g, e = timed(r, f"netra_{stage}")
            c = r.get(f"check_netra_{stage}", {})
            out.append(common.record(contract, f"netra.MoeExperts.{stage} (dispatched)", shape, g, e, ok, POLICY, peers(r, stage),
                                     nbytes, bandwidth, distinct_experts=distinct,
                                     worst_error_over_bound=c.get("worst_error_over_bound")))
    return out


# ---- inputs ----------------------------------------------------------------------------------------

def make_layer(seed: int) -> dict:
    g = torch.Generator(device="cuda").manual_seed(seed)
    def fp8(*shape):
        b = torch.randint(0, 256, shape, dtype=torch.uint8, device="cuda", generator=g)
        b[(b & 0x7F) == 0x7F] ^= 1  # no NaN encodings
        return b.view(torch.float8_e4m3fn)
    return {
        "w13": fp8(257, 1024, 2048),
        "s13": torch.empty(257, 8, 16, device="cuda").uniform_(1e-4, 4e-3, generator=g),
        "w2": fp8(257, 2048, 512),
        "s2": torch.empty(257, 16, 4, device="cuda").uniform_(1e-4, 4e-3, generator=g),
        "router": (torch.randn(256, 2048, device="cuda", generator=g) * 0.02).to(torch.bfloat16),
        "shared": (torch.randn(2048, device="cuda", generator=g) * 0.02).to(torch.bfloat16),
    }


# ---- the torch block ---------------------------------------------------------------------------

def torch_block(h, L, ids, rw):
    router_torch(h, L["router"], ids, rw)
    shared_gate_torch(h, L["shared"], ids, rw)
    gu = gate_up_torch(h, ids, L["w13"], L["s13"])
    q, s = act_quant_torch(gu)
    return down_torch(q, s, ids, rw, L["w2"], L["s2"])


# ---- FP64 references and the policy -----------------------------------------------------------------

def gate_up_ref64(h, ids, L):
    m = h.shape[0]
    q, sx = quantize_hidden(h)
    x = (q.double().view(m, 16, 128) * sx.double().view(m, 16, 1)).view(m, 2048)
    t = torch.arange(9 * m, device="cuda") // 9
    e = ids.reshape(-1).long()
    ref, mag = [], []
    for r in range(9 * m):  # one route at a time: 2 MiB of FP64 weights each
        w = (L["w13"][e[r]].double().view(8, 128, 16, 128) * L["s13"][e[r]].double().view(8, 1, 16, 1)).view(1024, 2048)
        ref.append(w @ x[t[r]])
        mag.append(w.abs() @ x[t[r]].abs())
    return torch.stack(ref), torch.stack(mag)


def down_ref64(act, act_scales, ids, rw, L):
    m = ids.shape[0]
    a = (act.double().view(-1, 4, 128) * act_scales.double().view(-1, 4, 1)).view(-1, 512)
    e = ids.reshape(-1).long()
    ref = torch.zeros(m, 2048, dtype=torch.float64, device="cuda")
    mag = torch.zeros_like(ref)
    for r in range(9 * m):
        w = (L["w2"][e[r]].double().view(16, 128, 4, 128) * L["s2"][e[r]].double().view(16, 1, 4, 1)).view(2048, 512)
        wt = rw.reshape(-1)[r].double()
        ref[r // 9] += wt * (w @ a[r])
        mag[r // 9] += wt.abs() * (w.abs() @ a[r].abs())
    return ref, mag


def policy(got: torch.Tensor, ref: torch.Tensor, mag: torch.Tensor) -> dict:
    g = got.double()
    nan_ref = torch.isnan(ref)
    bound = ref.abs() * 2.0 ** -8 + mag * 2.0 ** -15 + 2.0 ** -120
    ok = torch.where(nan_ref, torch.isnan(g), (g - ref).abs() <= bound)
    ratio = torch.where(nan_ref | torch.isnan(g), torch.zeros_like(g), (g - ref).abs() / bound)
    bad = (~ok).reshape(ok.shape[0], -1).any(dim=1).nonzero()
    # first_bad_row: the first route (gate_up) or token (down) with an element outside the policy
    return {"elements": got.numel(), "failures": int((~ok).sum()), "worst_error_over_bound": float(ratio.max()),
            "first_bad_row": int(bad[0]) if bad.numel() else None, "bad_rows": int(bad.numel())}


# ---- timing ------------------------------------------------------------------------------------------

def timed(calls, graph=True, eager=True):
    r = {}
    if graph:
        r["graph_us"] = common.bench_graph(calls)["median_us"]
    if eager:
        r["eager_us"] = common.bench_eager(calls)["median_us"]
    return r


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--out", default=None)
    p.add_argument("--layers", type=int, default=8)
    p.add_argument("--tokens", default="1,2,4,8,16,32,64,96,128,256,768")
    p.add_argument("--compile-tokens", default="1", help="token counts for the torch.compile peer (one compile each: slow)")
    p.add_argument("--peer-max-tokens", type=int, default=128, help="the torch peers' largest M (they gather 9M x 8 MiB of FP32 weights)")
    p.add_argument("--structure-floor", default=os.path.join(ROOT, "bench/results/evidence/moe_decode_structure_floor_h200.json"))
    p.add_argument("--grouped-floor", default=os.path.join(ROOT, "bench/results/evidence/moe_grouped_floor_h200.json"))
    a = p.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False

    bandwidth = common.copy_bandwidth()
    layers = [make_layer(1000 + i) for i in range(a.layers)]
    block, experts = MoeBlock(), MoeExperts()
    compiled = torch.compile(torch_block, dynamic=False)
    compiled_gate_up = torch.compile(gate_up_torch, dynamic=False)
    compiled_down = torch.compile(down_torch, dynamic=False)
    compile_tokens = {int(x) for x in a.compile_tokens.split(",") if x}
    records = []
    path = a.out or f"bench/results/moe_{torch.cuda.get_device_name().replace(' ', '_').lower()}.json"
    floors = {**structure_floors(a.structure_floor, ("chain", "chain_without_act", "fused", "fused_polled_ids")),
              **structure_floors(a.grouped_floor, ("grouped",))}

    def write(done):  # after every M, so that a run cut short keeps the token counts it measured
        # this run's records replace those of the same (contract, M); the file's others stay
        new = schema_records(done, bandwidth, floors)
        measured = {(r["contract"], r["shape"]["tokens"]) for r in new}
        common.merge_family(path, "moe", new, lambda r: (r["contract"], r["shape"].get("tokens")) in measured, bandwidth, BLOCK_METHOD,
                            block={"method": BLOCK_METHOD, "copy_bandwidth_bytes_per_s": bandwidth, "environment": common.environment()})

    for m in [int(x) for x in a.tokens.split(",")]:
        started = time.time()
        n = len(layers)
        g = torch.Generator(device="cuda").manual_seed(1000 + m)  # the same tokens, so the same routes, in every run
        hs = [torch.randn(m, 2048, device="cuda", generator=g).to(torch.bfloat16) for _ in range(n)]
        bufs = [block.buffers(m) for _ in range(n)]
        tids = [torch.empty(m, 9, dtype=torch.int32, device="cuda") for _ in range(n)]
        trw = [torch.empty(m, 9, dtype=torch.float32, device="cuda") for _ in range(n)]
        def netra_call(i, fused):
            L = layers[i]
            return lambda: block(hs[i], L["router"], L["shared"], L["w13"], L["s13"], L["w2"], L["s2"], bufs[i], fused=fused)
        # one eager pass fills the route metadata and intermediates the per-kernel calls reuse
        for i in range(n):
            netra_call(i, False)()
        torch.cuda.synchronize()
        distinct = [int(torch.unique(b["ids"]).numel()) for b in bufs]
        bytes_per_call = sum(distinct) / n * 3 * MIB + 1 * MIB + m * 2048 * 2 * 3 + 257 * (128 + 64) * 4
        roofline_us = bytes_per_call / bandwidth * 1e6

        rec = {"tokens": m, "layers": n, "distinct_experts_per_call": sum(distinct) / n, "weight_bytes_per_call": bytes_per_call,
               "roofline_us": roofline_us, "revision": common.environment()["git_revision"]}
        rec["netra_block"] = timed([netra_call(i, False) for i in range(n)])
        if m <= 4:
            rec["netra_block_fused"] = timed([netra_call(i, True) for i in range(n)])
        decode, with_peers = m <= 16, m <= a.peer_max_tokens
        if decode:  # the decode expert kernels alone (above 16 tokens the grouped stages: bench/moe_grouped.py)
            rec["netra_gate_up"] = timed([lambda i=i: experts.gate_up(hs[i], bufs[i]["ids"], layers[i]["w13"], layers[i]["s13"],
                                                                      out=bufs[i]["gate_up"]) for i in range(n)])
            rec["netra_down"] = timed([lambda i=i: experts.down(bufs[i]["act"], bufs[i]["ids"], bufs[i]["route_weights"], layers[i]["w2"],
                                                                layers[i]["s2"], act_scales=bufs[i]["act_scales"], out=bufs[i]["out"])
                                       for i in range(n)])
        if m <= 4:
            rec["netra_down_fused"] = timed([lambda i=i: experts.down(bufs[i]["gate_up"], bufs[i]["ids"], bufs[i]["route_weights"],
                                                                      layers[i]["w2"], layers[i]["s2"], out=bufs[i]["out"])
                                             for i in range(n)])
        # the Triton GEMMs (bench/moe_triton.py): the routes sorted into blocks once per layer, outside the timing
        routes = [moe_triton.Routes(b["ids"], moe_triton.block_m_for(m)) for b in bufs]
        quantized = [quantize_hidden(h) for h in hs]  # for the GEMMs alone (the stage alone quantizes, as netra's gate_up does)
        def triton_gate_up(i, fp8, prequantized=False):
            return lambda: moe_triton.gate_up(hs[i], routes[i], layers[i]["w13"], layers[i]["s13"], fp8,
                                              quantized[i] if prequantized else None)
        def triton_down(i, fp8):
            return lambda: moe_triton.down(bufs[i]["act"], bufs[i]["act_scales"], routes[i], bufs[i]["route_weights"], layers[i]["w2"],
                                           layers[i]["s2"], fp8)
        for form in TRITON_FORMS:
            fp8 = form == "fp8"
            rec[f"triton_{form}_gemms"] = timed([lambda i=i, fp8=fp8: (triton_gate_up(i, fp8, True)(), triton_down(i, fp8)()) for i in range(n)])
            if decode:
                rec[f"triton_{form}_gate_up"] = timed([triton_gate_up(i, fp8) for i in range(n)])
                rec[f"triton_{form}_down"] = timed([triton_down(i, fp8) for i in range(n)])
        def gate_up_peer(fn):
            return [lambda i=i: fn(hs[i], bufs[i]["ids"], layers[i]["w13"], layers[i]["s13"]) for i in range(n)]

        def down_peer(fn):
            return [lambda i=i: fn(bufs[i]["act"].view(torch.float8_e4m3fn), bufs[i]["act_scales"], bufs[i]["ids"], bufs[i]["route_weights"],
                                   layers[i]["w2"], layers[i]["s2"]) for i in range(n)]
        if with_peers:
            rec["torch_block"] = timed([lambda i=i: torch_block(hs[i], layers[i], tids[i], trw[i]) for i in range(n)])
            rec["torch_gate_up"] = timed(gate_up_peer(gate_up_torch))
            rec["torch_down"] = timed(down_peer(down_torch))
        if with_peers and m in compile_tokens:
            rec["compile_block"] = timed([lambda i=i: compiled(hs[i], layers[i], tids[i], trw[i]) for i in range(n)])
            rec["compile_gate_up"] = timed(gate_up_peer(compiled_gate_up))
            rec["compile_down"] = timed(down_peer(compiled_down))

        # exactness on call 0 (netra's own route metadata and act_quant output; above 16 tokens the
        # block's optional gate_up output is given for this call)
        L, b, h = layers[0], dict(bufs[0]), hs[0]
        if b["gate_up"] is None:
            b["gate_up"] = torch.empty(9 * m, 1024, dtype=torch.bfloat16, device="cuda")
        block(h, L["router"], L["shared"], L["w13"], L["s13"], L["w2"], L["s2"], b)
        torch.cuda.synchronize()
        gref, gmag = gate_up_ref64(h, b["ids"], L)
        rec["check_netra_gate_up"] = policy(b["gate_up"], gref, gmag)
        dref, dmag = down_ref64(b["act"], b["act_scales"], b["ids"], b["route_weights"], L)
        rec["check_netra_down"] = policy(b["out"], dref, dmag)
        for form in TRITON_FORMS:  # layer 0's routes: the same ids as this call's
            rec[f"check_triton_{form}_gate_up"] = policy(triton_gate_up(0, form == "fp8")(), gref, gmag)
            rec[f"check_triton_{form}_down"] = policy(triton_down(0, form == "fp8")(), dref, dmag)
        if with_peers:
            rec["check_torch_gate_up"] = policy(gate_up_peer(gate_up_torch)[0](), gref, gmag)
            rec["check_torch_down"] = policy(down_peer(down_torch)[0](), dref, dmag)
        if with_peers and m in compile_tokens:
            rec["check_compile_gate_up"] = policy(gate_up_peer(compiled_gate_up)[0](), gref, gmag)
            rec["check_compile_down"] = policy(down_peer(compiled_down)[0](), dref, dmag)
        del gref, gmag, dref, dmag
        if m <= 4:
            unfused_out = b["out"].clone()
            netra_call(0, True)()
            torch.cuda.synchronize()
            rec["fused_equals_unfused"] = bool(torch.equal(b["out"].view(torch.int16), unfused_out.view(torch.int16)))
        rec["block_graph_over_roofline"] = rec["netra_block"]["graph_us"] / roofline_us
        if m == 1:
            best = min(rec["netra_block"]["graph_us"], rec.get("netra_block_fused", {}).get("graph_us", math.inf))
            rec["target"] = f"M=1 block <= {BLOCK_M1_TARGET_US} us graph-replayed: {'met' if best <= BLOCK_M1_TARGET_US else 'MISSED'} ({best:.2f} us)"
        if m in BLOCK_ROOFLINE_FACTOR:
            f, want = rec["block_graph_over_roofline"], BLOCK_ROOFLINE_FACTOR[m]
            rec["target"] = f"M={m} block <= {want} x roofline: {'met' if f <= want else 'MISSED'} ({f:.3f} x)"
        rec["wall_s"] = time.time() - started
        records.append(rec)
        write(records)
        print({k: v for k, v in rec.items()}, flush=True)
        del hs, bufs, tids, trw, routes, quantized
        torch.cuda.empty_cache()

    rows = []
    for r in records:
        row = {"M": r["tokens"], "experts": r["distinct_experts_per_call"], "roofline_us": r["roofline_us"]}
        for k in ("netra_block", "netra_block_fused", "torch_block", "compile_block", "netra_gate_up", "netra_down", "netra_down_fused",
                  "torch_gate_up", "torch_down", "compile_gate_up", "compile_down"):
            if k in r:
                row[k + "_graph"] = r[k].get("graph_us")
                row[k + "_eager"] = r[k].get("eager_us")
        rows.append(row)
    common.print_table(rows, ["M", "experts", "roofline_us", "netra_block_graph", "netra_block_fused_graph", "torch_block_graph",
                              "compile_block_graph", "netra_block_eager", "netra_gate_up_graph", "netra_down_graph",
                              "netra_down_fused_graph", "torch_gate_up_graph", "torch_down_graph", "compile_gate_up_graph",
                              "compile_down_graph"])
    for r in records:
        if "target" in r:
            print(r["target"])
        for k in ("check_netra_gate_up", "check_netra_down", "check_torch_gate_up", "check_torch_down", "check_compile_gate_up",
                  "check_compile_down"):
            if k in r and r[k]["failures"]:
                print(f"M={r['tokens']} {k}: {r[k]['failures']} of {r[k]['elements']} outside the policy")
    print(f"copy bandwidth {bandwidth / 1e12:.3f} TB/s (read + write)")
    write(records)
    print("wrote", path)


if __name__ == "__main__":
    main()
