"""Gated delta net benchmark on the GPU (issue 27): netra's conv update, precompute, K0 verify,
M16, accepted-prefix replay and the one-token decode core (timed and checked against the host oracle by the C++ driver
`netra-bench-gdn`, same run) against torch implementations of the same math, eager and
torch.compile, and for K0 a Triton kernel (bench/gdn_triton.py), each eager and graph-replayed with inputs rotated past
the L2 (bench/common.py).

Peers are judged on the inputs the driver dumps with netra's outputs (which the driver and the GPU
tests check bitwise against the oracles): a peer is exact only if it reproduces every byte; its
mismatch count and largest error are recorded. Roofline: bytes / the copy bandwidth measured here;
fp32_floor_us: the kernel's FP32 operations (4 per state element per token, 3 in replay) at one
FP32 operation per lane per clock (132 SMs x 128 lanes x 1.98 GHz).

Floors (--floors: bench/gdn_floor.cu's JSON lines, same run): each record's floor_us is the
fastest memory floor of its contract and shape over the floor program's mappings (no kernel that
moves the compulsory bytes beats it), fp32_issue_floor_us the measured FP32-issue floor of K0 (4
operations) or of the replay (3, every request accepting T); the floors themselves go to --floor-out
(an evidence file).

usage: python3 bench/gdn.py --netra-bench build/tests/netra-bench-gdn --out bench/results/gdn_h200.json
           [--records LINES --dump DIR]   (a driver run's output and dump instead of running it)
           [--compile-peers 0|1|2]   (1: torch.compile for K0 B = 64 FP32 and conv B = 64 only; 2: every large shape)
           [--floors LINES --floor-out FILE] [--peer-seconds S]   (peers timed until S seconds have passed)
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, __file__.rsplit("/bench/", 1)[0])
from bench import common, gdn_triton  # noqa: E402

D, H, HV, K, V = 8192, 16, 32, 128, 128
FP32_RATE = 132 * 128 * 1.98e9
TARGETS = {("k0", 64, "fp32"): 60.0, ("k0", 64, "bf16"): 50.0, ("replay", 128, "bf16"): 74.0}
COMPARISON = "bitwise against the host oracle on sampled requests (every head) of the first input set, in the driver"
TRITON_K0 = "Triton K0 (bench/gdn_triton.py: the state rows in registers, outputs only)"


# ---- the peers: the torch implementations of the same math in python/netra/gdn.py ----------------
sys.path.insert(0, __file__.rsplit("/bench/", 1)[0] + "/python")
from netra.gdn import conv_torch, precompute_torch, recurrent_torch  # noqa: E402


def load(dump, name, dtype, shape):
    raw = np.fromfile(os.path.join(dump, name), dtype={torch.float32: np.float32, torch.int32: np.int32}.get(dtype, np.uint16))
    t = torch.from_numpy(raw.copy())
    if dtype == torch.bfloat16:
        t = t.view(torch.bfloat16)
    return t.view(*shape).cuda()


def compare(got, want):
    g, w = got.contiguous().view(-1), want.contiguous().view(-1)
    same = (g.view(torch.int16 if g.element_size() == 2 else torch.int32) == w.view(torch.int16 if w.element_size() == 2 else torch.int32))
    mism = int((~same).sum())
    err = float((g.float() - w.float()).abs().nan_to_num(0, 0, 0).max()) if g.numel() else 0.0
    return mism, err


# ---- peer runs on the dumped data: exactness -------------------------------------------------------
def exactness(dump):
    """{contract: (mismatches, max |error|, what)} of the torch math on the driver's inputs."""
    res = {}
    with torch.no_grad():
        if os.path.exists(os.path.join(dump, "conv_x.bin")):  # absent after a cores-only driver run
            x = load(dump, "conv_x.bin", torch.bfloat16, (64 * 12, D))
            w = load(dump, "conv_w.bin", torch.bfloat16, (D, 4))
            st = load(dump, "conv_state.bin", torch.bfloat16, (64, D, 3))
            y, win = conv_torch(x, w, st, True)
            m1, e1 = compare(y, load(dump, "conv_y_windows.bin", torch.bfloat16, (64 * 12, D)))
            m2, e2 = compare(win, load(dump, "conv_windows.bin", torch.bfloat16, (64, 12, D, 3)))
            res["conv"] = (m1 + m2, max(e1, e2), "y and windows, B = 64")
        if os.path.exists(os.path.join(dump, "pre_y.bin")):  # absent after a conv-only driver run
            R = 64 * 12
            q, k, dec, bet = precompute_torch(load(dump, "pre_y.bin", torch.bfloat16, (R, D)), load(dump, "pre_a.bin", torch.bfloat16, (R, HV)),
                                              load(dump, "pre_b.bin", torch.bfloat16, (R, HV)), load(dump, "pre_alog.bin", torch.float32, (HV,)),
                                              load(dump, "pre_dtbias.bin", torch.float32, (HV,)))
            mm, ee = 0, 0.0
            for got, name, shape in ((q, "pre_q.bin", (R, H, K)), (k, "pre_k.bin", (R, H, K)), (dec, "pre_decay.bin", (R, HV)), (bet, "pre_beta.bin", (R, HV))):
                m, e = compare(got, load(dump, name, torch.float32, shape))
                mm, ee = mm + m, max(ee, e)
            res["precompute"] = (mm, ee, "q, k, decay, beta, B = 64")
        for contract, B, T in (("k0", 64, 12), ("m16", 1, 16), ("replay", 128, 12), ("decode", 64, 1)):
            for sd, tdt in (("fp32", torch.float32), ("bf16", torch.bfloat16)):
                p = f"{contract}_{sd}"
                if not os.path.exists(os.path.join(dump, p + "_q.bin")):
                    continue
                R = B * T
                args = (load(dump, p + "_q.bin", torch.float32, (R, H, K)), load(dump, p + "_k.bin", torch.float32, (R, H, K)),
                        load(dump, p + "_y.bin", torch.bfloat16, (R, D)), load(dump, p + "_decay.bin", torch.float32, (R, HV)),
                        load(dump, p + "_beta.bin", torch.float32, (R, HV)), load(dump, p + "_state.bin", tdt, (B, HV, V, K)))
                after = load(dump, p + "_state_after.bin", tdt, (B, HV, V, K))
                if contract == "replay":
                    acc = load(dump, p + "_accepted.bin", torch.int32, (B,))
                    _, S = recurrent_torch(*args, T, accepted=acc, outputs=False)
                    res[p] = (*compare(S, after), f"committed state, B = {B}")
                else:
                    out, S = recurrent_torch(*args, T)
                    m, e = compare(out, load(dump, p + "_out.bin", torch.bfloat16, (R, HV, V)))
                    if contract == "k0":  # the Triton peer on the same inputs (outputs only)
                        res[p + "_triton"] = (*compare(gdn_triton.k0(*args, T), load(dump, p + "_out.bin", torch.bfloat16, (R, HV, V))),
                                              f"outputs, B = {B}")
                    committed = contract in ("m16", "decode")
                    if committed:
                        m2, e2 = compare(S, after)
                        m, e = m + m2, max(e, e2)
                    res[p] = (m, e, f"outputs{' and state' if committed else ''}, B = {B}")
    return res


# ---- peer timing ----------------------------------------------------------------------------------
def peer_calls(rec):
    """A list of zero-argument calls over rotated input sets for the record's shape (torch math)."""
    c, s = rec["contract"], rec["shape"]
    B, T = s["batch"], s["t"]
    R = B * T
    dev = "cuda"
    bf = lambda *shape: (torch.randn(*shape, device=dev) * 0.5).to(torch.bfloat16)  # noqa: E731
    n = common.rotation(int(rec["bytes"]))
    sets = []
    for _ in range(n):
        if c == "conv":
            sets.append((bf(R, D), bf(D, 4), bf(B, D, 3), bool(s["windows"])))
        elif c == "precompute":
            sets.append((bf(R, D), bf(R, HV), bf(R, HV), torch.randn(HV, device=dev), torch.randn(HV, device=dev)))
        else:
            sd = torch.float32 if s["state_dtype"] == "fp32" else torch.bfloat16
            q = F.normalize(torch.randn(R, H, K, device=dev), dim=-1)
            k = F.normalize(torch.randn(R, H, K, device=dev), dim=-1)
            st = (torch.randn(B, HV, V, K, device=dev) * 0.1).to(sd)
            acc = torch.full((B,), T, dtype=torch.int32, device=dev) if c == "replay" else None
            sets.append((q, k, bf(R, D), torch.rand(R, HV, device=dev), torch.rand(R, HV, device=dev), st, T, acc, c != "replay"))
    return sets


def time_peers(rec, compiled: bool):
    c = rec["contract"]
    fn = {"conv": conv_torch, "precompute": precompute_torch}.get(c, recurrent_torch)
    sets = peer_calls(rec)
    peers = []
    variants = [("torch eager", fn)]
    if compiled:
        variants.append(("torch.compile", torch.compile(fn, dynamic=False)))
    if c == "k0":
        variants.append((TRITON_K0, gdn_triton.k0))
    for name, f in variants:
        calls = [lambda a=a, f=f: f(*a) for a in sets]
        try:
            with torch.no_grad():
                eager = common.bench_eager(calls, reps=10)["median_us"]
                graph = common.bench_graph(calls, reps=10)["median_us"]
            peers.append({"name": name, "eager_us": eager, "graph_us": graph})
            if name == TRITON_K0:
                peers[-1]["config"] = gdn_triton.best_config()
        except Exception as e:  # noqa: BLE001 — a peer that cannot run is reported, not fatal
            peers.append({"name": name, "eager_us": None, "graph_us": None, "error": f"{type(e).__name__}: {str(e)[:200]}"})
    return peers


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--netra-bench", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--compile-peers", type=int, default=1)
    ap.add_argument("--records", help="the driver's JSON lines from an earlier run with --dump DIR (then the driver is not run)")
    ap.add_argument("--dump", help="the driver's dump directory of that run")
    ap.add_argument("--floors", help="bench/gdn_floor.cu's JSON lines from the same run")
    ap.add_argument("--floor-out", help="where the floors go (an evidence file)")
    ap.add_argument("--peer-seconds", type=float, default=1e9, help="time peers only until this many seconds have passed")
    a = ap.parse_args()
    t_start = time.monotonic()
    bw = common.copy_bandwidth()
    floors = [json.loads(line) for line in open(a.floors) if line.startswith("{")] if a.floors else []
    if a.floor_out and floors:
        common.write_family(a.floor_out, "gdn_floor", floors, bw, evidence=True,
                            method="bench/gdn_floor.cu: CUDA events, a burst over input sets rotated past 3x L2 captured into one graph and "
                                   "replayed, median of 30 (cuda_graph_timing.cuh)")

    def floor_of(c, s):
        """The fastest memory floor of the record's contract and shape, and the K0 FP32-issue floor."""
        kind = {"k0": "k0_memory", "replay": "replay_memory", "conv": "conv_memory"}.get(c)
        mem = [f["graph_us"] for f in floors if f["floor"] == kind and f["batch"] == s["batch"] and f.get("state_dtype") == s.get("state_dtype")
               and f.get("windows") == s.get("windows")] if kind else []
        issue = [f["graph_us"] for f in floors if f["floor"] == {"k0": "k0_fp32_issue", "replay": "replay_fp32_issue"}.get(c) and f["batch"] == s["batch"]]
        return (min(mem) if mem else None), (min(issue) if issue and s.get("accepted", "T") == "T" else None)
    if a.records:
        dump, text = a.dump, open(a.records).read()
    else:
        dump = tempfile.mkdtemp(prefix="gdn-bench-")
        text = subprocess.run([a.netra_bench, "--dump", dump], check=True, capture_output=True, text=True, timeout=240).stdout
    raw = [json.loads(line) for line in text.splitlines() if line.startswith("{")]
    try:
        exact = exactness(dump)
    except FileNotFoundError as e:  # a driver run cut before every dump was written
        print(f"exactness not measured: {e}", flush=True)
        exact = {}
    records = []
    for r in raw:
        s = r["shape"]
        c = r["contract"]
        key = c if c in ("conv", "precompute") else ("m16" if c.startswith("m16") else c) + "_" + s.get("state_dtype", "fp32")
        mism, err, what = exact.get(key, (None, None, None))
        big = (c == "k0" and s["batch"] == 64) or (c == "conv" and s["batch"] == 64 and s.get("layout") == "channel_major") or \
              (c == "replay" and s["batch"] == 128 and s.get("accepted") == "T") or c == "m16" or (c == "precompute" and s["batch"] == 64) or \
              (c == "decode" and s["batch"] in (64, 128))
        timed = c not in ("m16_precompute_core",) and (c != "replay" or s.get("accepted") == "T") and (c not in ("k0", "m16", "replay", "decode") or (s.get("value_block") == 8 and s.get("staging") == "per_token")) and \
            (c != "conv" or s.get("layout") == "channel_major") and (big or s["batch"] == 1 or c in ("conv", "precompute"))
        first = (c == "k0" and s["batch"] == 64 and s.get("state_dtype") == "fp32") or (c == "conv" and s["batch"] == 64 and s.get("windows"))
        compiled = a.compile_peers >= 2 and big or a.compile_peers == 1 and first and big
        peers = []
        if timed and time.monotonic() - t_start < a.peer_seconds:
            for p in time_peers(r, compiled=compiled):
                pm, pe, pw = exact.get(key + "_triton", (None, None, None)) if p["name"] == TRITON_K0 else (mism, err, what)
                note = (f"{pm} mismatching values, max |err| {pe:.3g} ({pw})" if pm is not None else "exactness not measured") + \
                    ("" if "config" not in p else f"; autotuned: {p['config']}") + ("" if "error" not in p else "; " + p["error"])
                peers.append(common.peer(p["name"], p["graph_us"], exact=pm == 0, eager_us=p["eager_us"], note=note,
                                         mismatches=pm, max_abs_error=pe))
        target = TARGETS.get((c, s["batch"], s.get("state_dtype")))
        if c == "conv" and s["batch"] == 64:
            target = 18.0 if s["windows"] else 9.0
        if c == "replay" and s.get("accepted") != "T":
            target = None
        if c == "m16_precompute_core":
            target = 10.0
        mem_floor, issue_floor = floor_of(c, s)
        records.append(common.record(c, r["instance"], s, r["netra_graph_us"], r["netra_eager_us"], r["correct"], COMPARISON, peers, r["bytes"], bw,
                                     floor_us=mem_floor, target_us=target, fp32_ops=r["fp32_ops"] or None,
                                     fp32_floor_us=(r["fp32_ops"] / FP32_RATE * 1e6) if r["fp32_ops"] else None,
                                     fp32_issue_floor_us=issue_floor))
        print(json.dumps({k: records[-1][k] for k in ("contract", "shape", "netra_graph_us", "roofline_us", "correct")}), flush=True)
        # Written after every record, so that a run cut short keeps what it measured.
        common.write_family(a.out, "gdn", records, bw,
                            method="CUDA events; netra: C++ driver bursts over input sets rotated past 3x L2, eager and one captured graph "
                                   "replayed, median of 30; torch peers: bench/common.py bench_eager / bench_graph, median of 10",
                            exactness={k: {"mismatches": v[0], "max_abs_error": v[1], "what": v[2]} for k, v in exact.items()})


if __name__ == "__main__":
    main()
