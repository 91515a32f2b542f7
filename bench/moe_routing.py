"""MoE routing benchmark on the GPU: netra's act_quant, router and shared-expert gate (sm90a)
against the torch eager composition of the same math, the same composition in a CUDA graph, and
torch.compile of it — eager and graph-replayed, inputs rotated past the L2 (bench/common.py,
docs/benchmarks.md). netra is timed by the C++ driver `netra-bench-moe-routing` (same GPU, same
run); torch peers here.

Every peer is first checked against the contract on fixed inputs (random and adversarial) that
the driver dumps together with netra's outputs (which the GPU tests check bitwise against the
oracles): a peer is exact only if it reproduces every byte. A faster inexact peer is reported as
such (mismatch counts are recorded), never as the baseline.

Targets (issue 4, H200, graph-replayed): act_quant R = 9 <= 1.6 us and R = 4608 <= 4 us;
router <= 3 us for M <= 128.

With --copy-floor, also runs bench/act_quant_copy_floor.cu (built by the CMake build as <build>/tests/act-quant-copy-floor): a kernel
that only moves act_quant's bytes, timed the same way; each act_quant record gets the fastest
variant that stores act_quant's outputs at its R (copy_floor_graph_us), the measured floor under any act_quant here,
and of the read-only variants (read_floor_graph_us), a bound under any kernel that reads its input.

Results (bench/schema.py): one record per (contract, instance, size) of the moe family, written
into FILE beside the decode block's records when FILE exists (bench/moe_block.py writes the
others; each keeps the other's records). netra's outputs are checked against the oracles by the GPU
tests, not here: bench/device/run.sh runs them first and passes their status (--gpu-tests-passed);
without it a record is unchecked (correct null).

usage: python3 bench/moe_routing.py --netra-bench build/tests/netra-bench-moe-routing [--copy-floor BIN] [--out FILE]
           [--gpu-tests-passed 0|1]
"""
from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile

import torch
import torch.nn.functional as F

sys.path.insert(0, __file__.rsplit("/bench/", 1)[0])
from bench import common  # noqa: E402

E4M3_MAX = 448.0
TARGETS_US = {("act_quant", 9): 1.6, ("act_quant", 4608): 4.0}
ROUTER_TARGET_US = 3.0
CONTRACTS = {"act_quant": "moe_act_quant", "router": "moe_router", "shared_gate": "moe_shared_gate"}
COMPARISONS = {
    "act_quant": "bitwise E4M3 values and FP32 scales against the host oracle (test_moe_routing_gpu)",
    "exact_fp32": "bitwise ids and weights against the host oracle (test_moe_routing_gpu)",
    "matrix_bf16": "bounded logits |l - l64| <= 2^-11 sum|h w|, ids and weights bitwise the routing of those logits (test_moe_routing_gpu)",
    "shared_gate": "bitwise slot 8 (id 256, sigmoid weight) against the host oracle (test_moe_routing_gpu)",
}
ROUTING_METHOD = ("median per call over 30 bursts; each call reads its own input set, sets cover >= 1.5x L2 (3x when a set exceeds "
                  "50 KiB); graph = burst captured once and replayed; peers checked bitwise against netra's outputs on random and "
                  "adversarial inputs")


def schema_records(raw: list[dict], bandwidth: float, correct: bool | None, correct_by: str | None, exactness: dict) -> list[dict]:
    """The routing measurements (netra, the torch composition, torch.compile of it, the copy floor)
    as records of the results shape. A peer is exact only if it reproduced every byte of netra's
    outputs (`exactness`: mismatch counts per input kind)."""
    key = {"act_quant": "act_quant", "router": "router_exact_fp32", "shared_gate": "shared_gate"}
    def note(fam, peer):
        e = exactness.get(key[fam], {}).get(peer, {})
        bad = {k: sum(v for n, v in kind.items() if n.endswith("mismatches")) for k, kind in e.items()}
        return "mismatches against netra's outputs: " + ", ".join(f"{k} {v}" for k, v in bad.items()) if any(bad.values()) else None
    out = []
    for r in raw:
        fam, size = r["family"], r["size"]
        shape = {"rows": size} if fam == "act_quant" else {"tokens": size}
        peers = [common.peer("torch (eager composition)", r["torch_graph_us"], r["torch_exact"], r["torch_eager_us"], note(fam, "torch")),
                 common.peer("torch.compile", r["compile_graph_us"], r["compile_exact"], r["compile_eager_us"], note(fam, "compile"))]
        extra = {k: r[k] for k in ("tactic", "kernels", "shared_gate", "read_floor_graph_us", "input_sets") if k in r}
        if correct_by:
            extra["correct_by"] = correct_by
        out.append(common.record(CONTRACTS[fam], r["instance"], shape, r["netra_graph_us"], r["netra_eager_us"], correct,
                                 COMPARISONS[r.get("tactic", fam)], peers, r["bytes"], bandwidth,
                                 floor_us=r.get("copy_floor_graph_us"), target_us=r["target_graph_us"], **extra))
    return out


# ---- the torch compositions of the contracts' math -----------------------------------------------

def act_quant_torch(x: torch.Tensor):
    """x: bf16 [R, 1024] = [gate | up] -> (e4m3 [R, 512], fp32 scales [R, 4])."""
    g, u = x.float().split(512, dim=1)
    y = (F.silu(g) * u).to(torch.bfloat16).float()
    yg = y.view(-1, 4, 128)
    amax = yg.abs().amax(dim=-1)
    scale = amax / E4M3_MAX
    q = (yg / scale.unsqueeze(-1)).clamp(-E4M3_MAX, E4M3_MAX).to(torch.float8_e4m3fn)
    return q.view(-1, 512), scale


def router_torch(h: torch.Tensor, w: torch.Tensor, ids: torch.Tensor, weights: torch.Tensor):
    """h: bf16 [M, 2048], w: bf16 [256, 2048] -> slots 0..7 of ids int32 / weights fp32 [M, 9]."""
    logits = h.float() @ w.float().t()
    p = torch.softmax(logits, dim=-1)
    top_p, top_i = torch.topk(p, 8, dim=-1)
    ids[:, :8] = top_i.to(torch.int32)
    weights[:, :8] = top_p / top_p.sum(dim=-1, keepdim=True)
    return ids, weights


def shared_gate_torch(h: torch.Tensor, wg: torch.Tensor, ids: torch.Tensor, weights: torch.Tensor):
    """Slot 8: id 256, weight sigmoid(h . wg)."""
    g = torch.sigmoid(h.float() @ wg.float())
    ids[:, 8] = 256
    weights[:, 8] = g
    return ids, weights


# ---- exactness against the dumped netra outputs ---------------------------------------------------

def load(path: str, dtype: torch.dtype, shape) -> torch.Tensor:
    with open(path, "rb") as f:
        data = bytearray(f.read())
    return torch.frombuffer(data, dtype=dtype).reshape(shape).cuda()


def bits(t: torch.Tensor) -> torch.Tensor:
    return t.contiguous().view(torch.int32) if t.dtype == torch.float32 else t.contiguous().view(torch.uint8)


def check_act_quant(fn, dump: str) -> dict:
    out = {}
    for kind in ("random", "adversarial"):
        x = load(f"{dump}/act_quant_{kind}.in.bin", torch.bfloat16, (4608, 1024))
        q_ref = load(f"{dump}/act_quant_{kind}.out_q.bin", torch.uint8, (4608, 512))
        s_ref = load(f"{dump}/act_quant_{kind}.out_scales.bin", torch.float32, (4608, 4))
        q, s = fn(x)
        q_bad = int((q.view(torch.uint8) != q_ref).sum())
        s_bad = int((bits(s) != bits(s_ref)).sum())
        out[kind] = {"value_mismatches": q_bad, "scale_mismatches": s_bad, "exact": q_bad == 0 and s_bad == 0}
    return out


def check_router(fn, dump: str, tactic: str, m: int) -> dict:
    w = load(f"{dump}/router_weight.bin", torch.bfloat16, (256, 2048))
    out = {}
    for kind in ("random", "adversarial"):
        h = load(f"{dump}/router_{tactic}_{kind}.in.bin", torch.bfloat16, (m, 2048))
        ids_ref = load(f"{dump}/router_{tactic}_{kind}.out_ids.bin", torch.int32, (m, 9))[:, :8]
        w_ref = load(f"{dump}/router_{tactic}_{kind}.out_weights.bin", torch.float32, (m, 9))[:, :8]
        ids = torch.zeros(m, 9, dtype=torch.int32, device="cuda")
        weights = torch.zeros(m, 9, dtype=torch.float32, device="cuda")
        fn(h, w, ids, weights)
        id_bad = int((ids[:, :8] != ids_ref).sum())
        w_bad = int((bits(weights[:, :8]) != bits(w_ref)).sum())
        out[kind] = {"id_mismatches": id_bad, "weight_mismatches": w_bad, "exact": id_bad == 0 and w_bad == 0}
    return out


def check_shared_gate(fn, dump: str, m: int) -> dict:
    wg = load(f"{dump}/shared_gate_weight.bin", torch.bfloat16, (2048,))
    out = {}
    for kind in ("random", "adversarial"):
        h = load(f"{dump}/shared_gate_{kind}.in.bin", torch.bfloat16, (m, 2048))
        ids_ref = load(f"{dump}/shared_gate_{kind}.out_ids.bin", torch.int32, (m, 9))[:, 8]
        w_ref = load(f"{dump}/shared_gate_{kind}.out_weights.bin", torch.float32, (m, 9))[:, 8]
        ids = torch.zeros(m, 9, dtype=torch.int32, device="cuda")
        weights = torch.zeros(m, 9, dtype=torch.float32, device="cuda")
        fn(h, wg, ids, weights)
        id_bad = int((ids[:, 8] != ids_ref).sum())
        w_bad = int((bits(weights[:, 8].contiguous()) != bits(w_ref.contiguous())).sum())
        out[kind] = {"id_mismatches": id_bad, "weight_mismatches": w_bad, "exact": id_bad == 0 and w_bad == 0}
    return out


# ---- timing of the peers ---------------------------------------------------------------------------

def time_calls(make_calls, bytes_per_call: int) -> dict:
    sets = common.rotation(bytes_per_call)
    calls, keep = make_calls(sets)
    eager = common.bench_eager(calls)
    graph = common.bench_graph(calls)
    del calls, keep
    torch.cuda.empty_cache()
    return {"eager_us": eager["median_us"], "graph_us": graph["median_us"], "input_sets": sets}


def act_quant_calls(fn, rows: int):
    def make(sets):
        xs = [torch.randn(rows, 1024, device="cuda").to(torch.bfloat16) for _ in range(sets)]
        return [lambda x=x: fn(x) for x in xs], xs
    return make


def router_calls(fn, m: int):
    def make(sets):
        hs = [torch.randn(m, 2048, device="cuda").to(torch.bfloat16) for _ in range(sets)]
        ws = [(0.03 * torch.randn(256, 2048, device="cuda")).to(torch.bfloat16) for _ in range(sets)]
        ids = [torch.zeros(m, 9, dtype=torch.int32, device="cuda") for _ in range(sets)]
        wts = [torch.zeros(m, 9, dtype=torch.float32, device="cuda") for _ in range(sets)]
        calls = [lambda i=i: fn(hs[i], ws[i], ids[i], wts[i]) for i in range(sets)]
        return calls, (hs, ws, ids, wts)
    return make


def shared_gate_calls(fn, m: int):
    def make(sets):
        hs = [torch.randn(m, 2048, device="cuda").to(torch.bfloat16) for _ in range(sets)]
        ws = [(0.03 * torch.randn(2048, device="cuda")).to(torch.bfloat16) for _ in range(sets)]
        ids = [torch.zeros(m, 9, dtype=torch.int32, device="cuda") for _ in range(sets)]
        wts = [torch.zeros(m, 9, dtype=torch.float32, device="cuda") for _ in range(sets)]
        calls = [lambda i=i: fn(hs[i], ws[i], ids[i], wts[i]) for i in range(sets)]
        return calls, (hs, ws, ids, wts)
    return make


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--netra-bench", required=True)
    p.add_argument("--copy-floor", default=None, help="act-quant-copy-floor binary (bench/act_quant_copy_floor.cu)")
    p.add_argument("--out", default=None)
    p.add_argument("--gpu-tests-passed", type=int, choices=(0, 1), default=None,
                   help="the status of ctest -L gpu in this device run (bench/device/run.sh)")
    a = p.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False  # the contracts accumulate in FP32

    bandwidth = common.copy_bandwidth()
    ours, diagnostics = [], []
    out = subprocess.run([a.netra_bench], check=True, capture_output=True, text=True).stdout
    for line in out.splitlines():
        if line.startswith("{"):
            record = json.loads(line)
            (diagnostics if record["family"] == "diagnostic" else ours).append(record)

    copy_floor = []
    if a.copy_floor:
        floor_out = subprocess.run([a.copy_floor], check=True, capture_output=True, text=True).stdout
        copy_floor = [json.loads(line) for line in floor_out.splitlines() if line.startswith("{")]

    dump = tempfile.mkdtemp(prefix="netra_moe_routing_")
    subprocess.run([a.netra_bench, "--dump", dump], check=True)

    compiled = {
        "act_quant": torch.compile(act_quant_torch, dynamic=False),
        "router": torch.compile(router_torch, dynamic=False),
        "shared_gate": torch.compile(shared_gate_torch, dynamic=False),
    }
    exactness = {
        "act_quant": {"torch": check_act_quant(act_quant_torch, dump), "compile": check_act_quant(compiled["act_quant"], dump)},
        "router_exact_fp32": {"torch": check_router(router_torch, dump, "exact", 32),
                              "compile": check_router(compiled["router"], dump, "exact", 32)},
        "shared_gate": {"torch": check_shared_gate(shared_gate_torch, dump, 64),
                        "compile": check_shared_gate(compiled["shared_gate"], dump, 64)},
    }

    def peer_exact(key: str, peer: str) -> bool:
        e = exactness[key][peer]
        return all(v["exact"] for v in e.values())

    peer_cache = {}
    records = []
    for o in ours:
        fam = o["family"]
        size = o.get("rows", o.get("tokens"))
        key = (fam, size)
        if key not in peer_cache:
            if fam == "act_quant":
                t = time_calls(act_quant_calls(act_quant_torch, size), o["bytes"])
                c = time_calls(act_quant_calls(compiled["act_quant"], size), o["bytes"])
            elif fam == "router":
                t = time_calls(router_calls(router_torch, size), o["bytes"])
                c = time_calls(router_calls(compiled["router"], size), o["bytes"])
            else:
                t = time_calls(shared_gate_calls(shared_gate_torch, size), o["bytes"])
                c = time_calls(shared_gate_calls(compiled["shared_gate"], size), o["bytes"])
            peer_cache[key] = (t, c)
        t, c = peer_cache[key]
        ex_key = {"act_quant": "act_quant", "router": "router_exact_fp32", "shared_gate": "shared_gate"}[fam]
        torch_exact, compile_exact = peer_exact(ex_key, "torch"), peer_exact(ex_key, "compile")
        exact_peers = [x for x, ok in ((t["graph_us"], torch_exact), (c["graph_us"], compile_exact)) if ok]
        target = TARGETS_US.get((fam, size)) if fam == "act_quant" else (ROUTER_TARGET_US if fam == "router" else None)
        r = {
            "family": fam, "instance": o["instance"], "size": size, "bytes": o["bytes"], "input_sets": o["input_sets"],
            "netra_eager_us": o["netra_eager_us"], "netra_graph_us": o["netra_graph_us"],
            "torch_eager_us": t["eager_us"], "torch_graph_us": t["graph_us"],
            "compile_eager_us": c["eager_us"], "compile_graph_us": c["graph_us"],
            "torch_exact": torch_exact, "compile_exact": compile_exact,
            "roofline_us": o["bytes"] / bandwidth * 1e6,
            "speedup_vs_torch_graph": t["graph_us"] / o["netra_graph_us"],
            "speedup_vs_compile_graph": c["graph_us"] / o["netra_graph_us"],
            "speedup_vs_best_exact_peer_graph": (min(exact_peers) / o["netra_graph_us"]) if exact_peers else None,
            "target_graph_us": target,
            "meets_target": (o["netra_graph_us"] <= target) if target else None,
        }
        if fam == "act_quant":
            r["copy_floor_graph_us"] = min((f["graph_us"] for f in copy_floor if f["rows"] == size and f.get("writes", True)), default=None)
            r["read_floor_graph_us"] = min((f["graph_us"] for f in copy_floor if f["rows"] == size and not f.get("writes", True)), default=None)
        if fam == "router":
            r["tactic"] = o["tactic"]
            r["kernels"] = o["kernels"]          # 2: logits + route; 1: the cluster kernel
            r["shared_gate"] = o["shared_gate"]  # also writes slot 8 (the peers route without the gate)
        records.append(r)

    common.print_table(records, ["family", "instance", "size", "netra_graph_us", "netra_eager_us", "torch_graph_us", "compile_graph_us",
                                 "roofline_us", "copy_floor_graph_us", "read_floor_graph_us", "torch_exact", "compile_exact", "target_graph_us", "meets_target"])
    print(json.dumps(exactness, indent=1))
    if diagnostics:
        print("diagnostics (graph-replayed us per call; no_pdl: every kernel launched without programmatic dependent launch;"
              " router: each kernel alone):")
        common.print_table(diagnostics, ["kernel", "instance", "size", "graph_us", "no_pdl_graph_us", "logits_alone_graph_us",
                                         "route_alone_graph_us", "resident_clusters"])
    print(f"copy bandwidth {bandwidth / 1e12:.3f} TB/s (read + write)")
    path = a.out or f"bench/results/moe_{torch.cuda.get_device_name().replace(' ', '_').lower()}.json"
    correct = None if a.gpu_tests_passed is None else bool(a.gpu_tests_passed)
    checked_by = "ctest -L gpu in this device run" if correct is not None else None
    common.merge_family(path, "moe", schema_records(records, bandwidth, correct, checked_by, exactness),
                        lambda r: r["contract"] in CONTRACTS.values(), bandwidth, ROUTING_METHOD,
                        routing={"method": ROUTING_METHOD, "copy_bandwidth_bytes_per_s": bandwidth, "environment": common.environment(),
                                 "peer_exactness": exactness, "diagnostics": diagnostics, "act_quant_copy_floor": copy_floor})
    print("wrote", path)


if __name__ == "__main__":
    main()
