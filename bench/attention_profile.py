"""Where the served GQA8 calls spend their time on the H200 (issue 26): a small driver for ncu and a
kernel timeline, over bench/attention.py's instances and inputs.

--mode ncu: launches each case of CASES once, in order (stage one, then stage two where the call is
split; stage two plainly), and prints the manifest of the kernel launches in that order, so that
`ncu -k regex:netra` reports can be named (ncu serialises the launches anyway).
--mode timeline: per case, CUDA-graph replays over input sets rotated past L2 of the whole call and,
for split calls, of stage one alone, stage two alone (over the workspace the last stage one wrote)
and the call with stage two's other launch (programmatic <-> plain), timed with events
(bench/common.bench_graph) and traced with torch.profiler (CUPTI): each kernel's duration and the
gaps stage one end -> stage two start -> next call's stage one start, medians over the traced
replays, written to --out.

--mode compare: the same calls on --baseline's cubins and on --objects', one process: per case the
outputs of both on the same inputs compared bit for bit, the new output against the contract's bound,
and the graph-replayed call (and stage one alone, split calls) in rounds alternating the order.

usage: python3 bench/attention_profile.py --objects DIR --mode ncu
       python3 bench/attention_profile.py --objects DIR --mode timeline --out FILE.json [--trace FILE.json.gz]
       python3 bench/attention_profile.py --objects NEW --baseline OLD --mode compare --out FILE.json
"""
from __future__ import annotations

import argparse
import ctypes
import gzip
import json
import os
import statistics
import sys

import torch

sys.path.insert(0, __file__.rsplit("/bench/", 1)[0])
from bench import common  # noqa: E402
from bench.attention import D, HKV, Case, Instance, cuda  # noqa: E402
from bench.attention_common import Gqa8Args as Args, check  # noqa: E402

# name, (phase, tq, page, BlockWarps, Stages, MaxBatch, SplitCapacity, BlockSplit), KV lengths, Tq, seed
CASES = [
    ("decode B=64 L=8192 8x0 (served)", (0, 1, 1, 8, 0, 64, 512, 1), [8192] * 64, 1, 101),
    ("decode B=64 L=8192 2x0/8 (compared)", (0, 1, 1, 2, 0, 64, 512, 8), [8192] * 64, 1, 101),
    ("verify Tq=12 L=8192 1x6/2", (2, 12, 1, 1, 6, 64, 128, 2), [8192 + 12], 12, 105),
    ("verify Tq=12 L=49152 1x6/2", (2, 12, 1, 1, 6, 64, 128, 2), [49152 + 12], 12, 102),
    ("decode B=1 L=8192 2x0/4 (served)", (0, 1, 1, 2, 0, 64, 512, 4), [8192], 1, 100),
]


def instance(objects: str, spec) -> Instance:
    phase, tq, page, bw, stages, max_batch, cap, split = spec
    return Instance(objects, phase, tq, page, bw, stages, max_batch=max_batch, cap=cap, split=split)


def run_ncu(objects: str, cases: int) -> None:
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    manifest = []
    for name, spec, lengths, tq, seed in CASES[:cases]:
        inst, c = instance(objects, spec), Case(lengths, tq, 1, seed)
        slices = inst.slices_for(c.batch, sms)
        inst.launch(c, 0, slices, programmatic=False)
        torch.cuda.synchronize()
        manifest.append(f"{name}: stage one ({inst.name}, grid {slices}x2x{c.batch}, {inst.threads} threads, {inst.lds} B LDS)")
        if slices > 1:
            manifest.append(f"{name}: stage two (grid {2 * 8 * tq}x{c.batch}, 256 threads, {slices} slices)")
        del c
        torch.cuda.empty_cache()
    for i, m in enumerate(manifest):
        print(f"launch {i}: {m}", flush=True)


def launch_stage_two(inst: Instance, c: Case, s: int, slices: int) -> None:
    """Stage two alone, plainly, with the arguments Instance.launch gives it."""
    a = Args(c.q[s].data_ptr(), c.out[s].data_ptr(), c.k[s].data_ptr(), c.v[s].data_ptr(), c.qo.data_ptr(), c.kv_indptr.data_ptr(),
             c.kv_indices[s].data_ptr(), c.kv_indptr.data_ptr(), c.scales.data_ptr(), c.scales.data_ptr() + 4,
             inst.workspace.data_ptr(), inst.workspace.data_ptr() + inst.split_o_bytes, c.q_tokens, c.slots, c.kv_indices[s].numel(), slices)
    params = (ctypes.c_void_p * 1)(ctypes.cast(ctypes.pointer(a), ctypes.c_void_p))
    stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
    check(cuda.cuLaunchKernel(inst.two, HKV * 8 * c.tq, c.batch, 1, D, 1, 1, 0, stream, params, None), "launch two")


def kernel_events(trace: dict) -> list[dict]:
    return sorted((e for e in trace.get("traceEvents", []) if e.get("cat") == "kernel" and "stage_" in e.get("name", "")),
                  key=lambda e: e["ts"])


def run_timeline(objects: str, out: str, trace_out: str | None, replays: int) -> None:
    from torch.profiler import ProfilerActivity, profile
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    results, traces = [], {}
    for name, spec, lengths, tq, seed in CASES:
        inst = instance(objects, spec)
        probe = Case(lengths, tq, 1, seed)
        sets = min(common.rotation(probe.bytes()), 64)
        del probe
        c = Case(lengths, tq, sets, seed)
        slices = inst.slices_for(c.batch, sms)
        rec = {"case": name, "instance": inst.name, "slices": slices, "input_sets": sets, "threads": inst.threads}
        forms = {"call": lambda s: inst.launch(c, s, slices)}
        if slices > 1:
            forms["stage one alone"] = lambda s: inst.launch(c, s, slices, stage_two=False)
            forms["stage two alone"] = lambda s: launch_stage_two(inst, c, s, slices)  # over the workspace the last stage one wrote
            # the other launch of stage two (its wait_for_prerequisites makes either correct): decode served programmatic,
            # verify served plain (stage one's ring staging never releases it early: the implicit release at its end)
            forms["call, stage two plain" if inst.programmatic else "call, stage two programmatic"] = \
                lambda s: inst.launch(c, s, slices, programmatic=not inst.programmatic)
        for form, launch in forms.items():
            calls = [lambda s=s: launch(s) for s in range(sets)]
            timed = common.bench_graph(calls, reps=15)
            side = torch.cuda.Stream()  # capture once more for the trace (bench_graph keeps its graph private)
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                for f in calls:
                    f()
            torch.cuda.current_stream().wait_stream(side)
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                for f in calls:
                    f()
            graph.replay()
            torch.cuda.synchronize()
            with profile(activities=[ProfilerActivity.CUDA]) as prof:
                for _ in range(replays):
                    graph.replay()
                torch.cuda.synchronize()
            path = f"/tmp/attention_profile_trace_{len(traces)}.json"
            prof.export_chrome_trace(path)
            trace = json.load(open(path))
            os.remove(path)
            ev = kernel_events(trace)
            if not ev:  # no graph kernels in the trace: trace the same calls launched eagerly instead
                with profile(activities=[ProfilerActivity.CUDA]) as prof:
                    for _ in range(replays):
                        for f in calls:
                            f()
                    torch.cuda.synchronize()
                prof.export_chrome_trace(path)
                ev = kernel_events(json.load(open(path)))
                os.remove(path)
                rec.setdefault("traced_eagerly", []).append(form)
            traces[f"{name} | {form}"] = [{k: e[k] for k in ("name", "ts", "dur")} for e in ev]
            ones = [e for e in ev if e["name"].endswith("stage_one")]
            twos = [e for e in ev if e["name"].endswith("stage_two")]
            entry = {"graph_us_per_call": timed["median_us"], "graph_min_us": timed["min_us"], "traced_kernels": len(ev)}
            if ones:
                entry["stage_one_us"] = statistics.median(e["dur"] for e in ones)
                entry["stage_one_min_max_us"] = [min(e["dur"] for e in ones), max(e["dur"] for e in ones)]
            if twos:
                entry["stage_two_us"] = statistics.median(e["dur"] for e in twos)
                entry["stage_two_min_max_us"] = [min(e["dur"] for e in twos), max(e["dur"] for e in twos)]
            # gaps between consecutive kernels, by the pair of kernels (end of the first to the start of the next;
            # negative: the second started before the first ended, as a programmatic dependent may)
            gaps = {}
            for a_, b_ in zip(ev, ev[1:]):
                key = f"{a_['name'].rsplit('_', 2)[-2]}_{a_['name'].rsplit('_', 1)[-1]} -> {b_['name'].rsplit('_', 2)[-2]}_{b_['name'].rsplit('_', 1)[-1]}"
                gaps.setdefault(key, []).append(b_["ts"] - (a_["ts"] + a_["dur"]))
            entry["gaps_us"] = {k: {"median": statistics.median(v), "min": min(v), "max": max(v), "n": len(v)} for k, v in gaps.items()}
            if len(ev) > 1:
                span = ev[-1]["ts"] + ev[-1]["dur"] - ev[0]["ts"]
                entry["traced_us_per_call"] = span / (replays * sets)
            rec[form] = entry
            print(f"{name} | {form}: {json.dumps(entry)}", flush=True)
            del graph
        results.append(rec)
        del c
        torch.cuda.empty_cache()
        json.dump({"environment": common.environment(), "method": METHOD, "records": results}, open(out, "w"), indent=1)
    if trace_out:
        with gzip.open(trace_out, "wt") as f:
            json.dump(traces, f)


METHOD = ("per case, a CUDA graph of the call (and of stage one alone) over input sets rotated past L2 (>= 3x L2, at most 64): "
          "graph_us_per_call from events (median of 15 replays, bench/common.bench_graph); the same graph replayed under "
          "torch.profiler (CUPTI kernel activity): each kernel's duration and the gap between consecutive kernels, medians "
          "over the traced replays")


COMPARE = [
    ("decode B=64 L=8192 8x0 (served)", (0, 1, 1, 8, 0, 64, 512, 1), [8192] * 64, 1, 201),
    ("decode B=16 L=8192 2x0 (served)", (0, 1, 1, 2, 0, 64, 512, 1), [8192] * 16, 1, 202),
    ("decode B=4 ragged 2x0 (served)", (0, 1, 1, 2, 0, 64, 512, 1), [0, 65, 3000, 8192], 1, 203),
    ("decode B=128 L=8192 2x0 widened (served)", (0, 1, 1, 2, 0, 128, 512, 1), [8192] * 128, 1, 204),
    ("decode B=64 L=32768 8x0 (served)", (0, 1, 1, 8, 0, 64, 512, 1), [32768] * 64, 1, 205),
    ("decode B=1 L=8192 2x0/4 (served)", (0, 1, 1, 2, 0, 64, 512, 4), [8192], 1, 206),
    ("verify Tq=12 L=8192 1x6/2", (2, 12, 1, 1, 6, 64, 128, 2), [8192 + 12], 12, 207),
    ("verify Tq=12 L=49152 1x6/2", (2, 12, 1, 1, 6, 64, 128, 2), [49152 + 12], 12, 208),
]


def run_compare(objects: str, baseline: str, out: str, rounds: int, budget_s: float) -> None:
    import time
    from bench.attention import compare
    began = time.monotonic()
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    results = []
    for name, spec, lengths, tq, seed in COMPARE:
        if time.monotonic() - began > budget_s:
            print(f"budget reached before {name}", flush=True)
            break
        new, old = instance(objects, spec), instance(baseline, spec)
        probe = Case(lengths, tq, 1, seed)
        sets = min(common.rotation(probe.bytes()), 64)
        del probe
        c = Case(lengths, tq, sets, seed)
        slices = new.slices_for(c.batch, sms)
        outs = {}
        for label, inst in (("baseline", old), ("new", new)):
            for x in c.out:
                x.fill_(float("nan"))
            inst.launch(c, 0, slices)
            torch.cuda.synchronize()
            outs[label] = c.out[0].clone()
        differ = int((outs["new"].view(torch.int16) != outs["baseline"].view(torch.int16)).sum())
        seen = [b for b in range(c.batch) if c.lengths[b] > 0]  # the FP64 reference needs positions
        cmp = compare(c, outs["new"], 0, sorted({seen[0], seen[-1]}) if seen else [])
        rec = {"case": name, "instance": new.name, "slices": slices, "input_sets": sets, "outputs": outs["new"].numel(),
               "differing_from_baseline": differ, **{f"new_{k}": v for k, v in cmp.items()}, "rounds": []}
        for r in range(rounds):
            order = (("baseline", old), ("new", new)) if r % 2 == 0 else (("new", new), ("baseline", old))
            for label, inst in order:
                t = common.bench_graph([lambda s=s, i=inst: i.launch(c, s, slices) for s in range(sets)], reps=15)["median_us"]
                one = (common.bench_graph([lambda s=s, i=inst: i.launch(c, s, slices, stage_two=False) for s in range(sets)], reps=15)["median_us"]
                       if slices > 1 else None)
                rec["rounds"].append({"round": r, "form": label, "graph_us": t, "stage_one_graph_us": one})
        for label in ("baseline", "new"):
            rs = [x for x in rec["rounds"] if x["form"] == label]
            rec[f"{label}_graph_us"] = statistics.median(x["graph_us"] for x in rs)
            if slices > 1:
                rec[f"{label}_stage_one_graph_us"] = statistics.median(x["stage_one_graph_us"] for x in rs)
        print(f"{name}: slices {slices}, {differ} of {rec['outputs']} outputs differ from the baseline's, new beyond bound {cmp['beyond_bound']} | "
              f"baseline {rec['baseline_graph_us']:.2f} us, new {rec['new_graph_us']:.2f} us"
              + (f" | stage one {rec['baseline_stage_one_graph_us']:.2f} -> {rec['new_stage_one_graph_us']:.2f}" if slices > 1 else ""), flush=True)
        results.append(rec)
        json.dump({"environment": common.environment(), "method": COMPARE_METHOD, "records": results}, open(out, "w"), indent=1)
        del c
        torch.cuda.empty_cache()


COMPARE_METHOD = ("per case one input set family (rotated past L2, >= 3x L2, at most 64 sets); both cubin sets' calls on set 0 compared "
                  "bit for bit and the new call against the contract's bound (bench/attention.py compare, first and last request); "
                  "then CUDA-graph replay of the call (and stage one alone where split), median of 15, in rounds alternating which "
                  "cubin set goes first; each figure the median over the rounds")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--objects", required=True)
    ap.add_argument("--mode", choices=("ncu", "timeline", "compare"), required=True)
    ap.add_argument("--baseline", help="compare: the cubins of the revision compared against")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--cases", type=int, default=len(CASES), help="ncu: launch only the first CASES cases")
    ap.add_argument("--budget-s", type=float, default=60.0, help="compare: start no new case after this many seconds")
    ap.add_argument("--out")
    ap.add_argument("--trace")
    ap.add_argument("--replays", type=int, default=3)
    a = ap.parse_args()
    torch.zeros(1, device="cuda")
    if a.mode == "ncu":
        run_ncu(a.objects, a.cases)
    elif a.mode == "compare":
        run_compare(a.objects, a.baseline, a.out, a.rounds, a.budget_s)
    else:
        run_timeline(a.objects, a.out, a.trace, a.replays)


if __name__ == "__main__":
    main()
