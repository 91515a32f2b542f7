"""Split verification (Tq = 12) on the H200: the forms of its stage one compared in one process.

The served verify (two-token waves on two warpgroups, WarpgroupMma: 256 threads, 6 ring stages), the
catalogued form it replaced (each wave over two warps, BlockSplit 2: 384 threads) and the one before
that (one warp a wave: 192 threads, 8 stages; --forms may
name others built from lab/attention patches) on the same shapes, seeds and input sets, each call checked against the contract's bound in the same run (bench/attention.py's
bench_shape: graph replay over input sets rotated past L2, stage one alone, the peers on a BF16 copy
with the first form of each shape). Rounds: the forms in order, then again in reverse order (the
figure of a form is its median over the rounds' medians, each round's kept in verify_forms).

usage: python3 bench/attention_verify.py --objects build/code_objects --out /tmp/attention_verify_h200.json
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, __file__.rsplit("/bench/", 1)[0])
from bench import common  # noqa: E402
from bench.attention import Case, Instance, bench_shape  # noqa: E402



def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--objects", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--budget-s", type=float, default=60.0, help="start no new call after this many seconds")
    ap.add_argument("--floors", help="bench/attention_floor.py's evidence file (the 192- and 384-thread verify grids' floors)")
    ap.add_argument("--forms", default="1x6w,1x6/2,1x8", help="comma-separated forms 1xSTAGES[/SPLIT][w][:DIR] (BlockWarps 1; w: WarpgroupMma; DIR: a lab build's cubins), "
                                                                "the served one first; each must be a catalogued cubin")
    ap.add_argument("--rounds", type=int, default=2)
    a = ap.parse_args()
    began = time.monotonic()
    torch.zeros(1, device="cuda")
    bw = common.copy_bandwidth()
    def form(name: str) -> Instance:  # 1xSTAGES[/SPLIT][w][:DIR]: DIR, other cubins of the same instance (a lab build)
        name, _, objects = name.partition(":")
        warpgroup = name.endswith("w")
        stages, _, split = name.removeprefix("1x").removesuffix("w").partition("/")
        return Instance(objects or a.objects, 2, 12, 1, 1, int(stages), split=int(split or 1), warpgroup=warpgroup)
    forms = {n: form(n) for n in a.forms.split(",")}
    floors = {}
    if a.floors and os.path.exists(a.floors):
        for f in json.load(open(a.floors))["records"]:
            if f["mode"] == "stream":
                floors.setdefault(f["shape"], []).append({"mapping": f["mapping"], "graph_us": f["graph_us"]})
    records, cmp = [], []
    method = ("bench/attention.py's bench_shape per form: CUDA graph replay of calls over input sets rotated past L2 (>= 3x L2), median "
              "of 15; stage one alone the same way; every call checked against the contract's bound and for repeatable bits in the "
              "same run; the peers (torch SDPA, every backend, on a BF16 copy of the gathered dequantized cache, the copy timed "
              "apart) with the first form of each shape in the first round; rounds alternate the forms' order")

    def save() -> None:
        summary = {}
        for c in cmp:
            summary.setdefault((c["form"], c["shape"]["kv_len"]), []).append(c)
        best = [{"form": f, "kv_len": L, "instance": cs[0]["instance"], "rounds": len(cs),
                 "netra_graph_us": statistics.median(c["netra_graph_us"] for c in cs),
                 "stage_one_graph_us": statistics.median(c["stage_one_graph_us"] for c in cs if c["stage_one_graph_us"] is not None),
                 "correct": all(c["correct"] for c in cs)} for (f, L), cs in summary.items()]
        common.write_family(a.out, "attention", records, bw, method=method, verify_forms=cmp, verify_forms_bits=bits, verify_forms_summary=best,
                            floors_under_netra_grids=[{"shape": k, **m} for k, v in floors.items() for m in v])

    shapes = [([49152 + 12], 102, "verify Tq=12 L=49152", 20.0), ([8192 + 12], 105, "verify Tq=12 L=8192", None)]
    names = list(forms)
    # Every form's bits against the first form's on the same random call (the same instructions in the same order).
    bits = []
    for lengths, seed, _, _ in shapes:
        c = Case(lengths, 12, 1, seed + 1000)
        outs = {}
        for name in names:
            inst = forms[name]
            c.out[0].fill_(float("nan"))
            inst.launch(c, 0, inst.slices_for(1, torch.cuda.get_device_properties(0).multi_processor_count))
            torch.cuda.synchronize()
            outs[name] = c.out[0].clone()
        for name in names[1:]:
            differ = int((outs[name].view(torch.int16) != outs[names[0]].view(torch.int16)).sum())
            bits.append({"kv_len": lengths[0] - 12, "form": name, "against": names[0], "outputs": outs[name].numel(), "differing": differ})
            print(f"bits: {name} against {names[0]} at prefix {lengths[0] - 12}: {differ} of {outs[name].numel()} differ", flush=True)
        del c, outs
        torch.cuda.empty_cache()
    for rnd in range(a.rounds):
        order = names if rnd % 2 == 0 else names[::-1]
        for lengths, seed, floor_key, target in shapes:
            for i, name in enumerate(order):
                if time.monotonic() - began > a.budget_s:
                    break
                inst = forms[name]
                grid = f"verify {inst.bw}x{inst.stages}"
                r = bench_shape(inst, lengths, 12, "split_verify_gqa8", target, seed, bw, peers_on=rnd == 0 and i == 0,
                                floor_us=next((f["graph_us"] for f in floors.get(floor_key, []) if f["mapping"] == grid), None))
                r["verify_form"] = name
                if rnd == 0:
                    records.append(r)
                cmp.append({"round": rnd, "form": name, **{k: r[k] for k in ("instance", "shape", "netra_graph_us", "netra_eager_us", "stage_one_graph_us",
                                                                               "correct", "slices", "max_abs_err", "beyond_bound", "repeatable_bits")
                                                             if k in r}})
                save()
    save()


if __name__ == "__main__":
    main()
