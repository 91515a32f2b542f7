"""Where the decode MoE block's time goes on the GPU: one CUDA graph of `layers` blocks (each
layer its own weights, as in bench/moe_block.py) replayed under the torch profiler (CUPTI kernel
activity); for each block after the first, every kernel's start and end relative to the end of
the previous block's last kernel, and each kernel's share of the critical path (its end minus
the previous kernel's end: with programmatic dependent launch a kernel starts early and waits, so
its own duration overlaps its predecessor's). Medians over the blocks of several replays.
Results: bench/results/evidence/moe_block_timeline_h200.json (evidence: the envelope of bench/schema.py).

usage: python3 bench/moe_block_timeline.py [--tokens 1] [--layers 8] [--out PATH]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile

import torch
from torch.profiler import ProfilerActivity, profile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from bench import common  # noqa: E402
from bench.moe_block import make_layer  # noqa: E402
from netra.moe_experts import MoeBlock  # noqa: E402


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--tokens", default="1,16")
    p.add_argument("--layers", type=int, default=8)
    p.add_argument("--replays", type=int, default=5)
    p.add_argument("--out", default=None)
    a = p.parse_args()
    layers = [make_layer(2000 + i) for i in range(a.layers)]
    block = MoeBlock()
    records = []
    for m in [int(x) for x in a.tokens.split(",")]:
        g = torch.Generator(device="cuda").manual_seed(1000 + m)  # seeded per M: every run routes the same tokens alike
        hs = [torch.randn(m, 2048, device="cuda", generator=g).to(torch.bfloat16) for _ in layers]
        bufs = [block.buffers(m) for _ in layers]

        def burst():
            for i, L in enumerate(layers):
                block(hs[i], L["router"], L["shared"], L["w13"], L["s13"], L["w2"], L["s2"], bufs[i])

        burst()
        torch.cuda.synchronize()
        stream = torch.cuda.Stream()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.stream(stream):
            with torch.cuda.graph(graph, stream=stream):
                burst()
        for _ in range(3):
            graph.replay()
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _ in range(a.replays):
                graph.replay()
            torch.cuda.synchronize()
        with tempfile.TemporaryDirectory() as tmp:
            trace = os.path.join(tmp, "trace.json")
            prof.export_chrome_trace(trace)
            with open(trace) as f:
                events = json.load(f)["traceEvents"]
        kernels = sorted(((e["ts"], e["ts"] + e["dur"], e["name"]) for e in events
                          if e.get("cat") == "kernel" and e.get("name", "").startswith("netra_")), key=lambda k: k[0])
        if not kernels or len(kernels) % (a.replays * a.layers):
            raise RuntimeError(f"{len(kernels)} netra kernels profiled for {a.replays} x {a.layers} blocks")
        per_block = len(kernels) // (a.replays * a.layers)
        names = [k[2] for k in kernels[:per_block]]
        rows: dict[int, dict[str, list[float]]] = {i: {"start": [], "end": [], "critical": []} for i in range(per_block)}
        block_us = []
        for b in range(1, a.replays * a.layers):
            if b % a.layers == 0:
                continue  # the first block of a replay follows the previous replay's gap
            ks = kernels[b * per_block:(b + 1) * per_block]
            if [k[2] for k in ks] != names:
                raise RuntimeError("kernel order differs between blocks")
            t0 = kernels[b * per_block - 1][1]  # end of the previous block
            prev_end = t0
            for i, (s, e, _) in enumerate(ks):
                rows[i]["start"].append(s - t0)
                rows[i]["end"].append(e - t0)
                rows[i]["critical"].append(e - prev_end)
                prev_end = e
            block_us.append(ks[-1][1] - t0)
        rec = {"tokens": m, "block_us": statistics.median(block_us), "kernels": [
            {"kernel": names[i], "start_us": statistics.median(rows[i]["start"]), "end_us": statistics.median(rows[i]["end"]),
             "critical_path_us": statistics.median(rows[i]["critical"])} for i in range(per_block)]}
        records.append(rec)
        print(f"M={m}: block {rec['block_us']:.2f} us (end to end, median)")
        common.print_table(rec["kernels"], ["kernel", "start_us", "end_us", "critical_path_us"])
    path = a.out or "bench/results/evidence/moe_block_timeline_h200.json"
    common.write_family(path, "moe_block_timeline", records, None,
                        "torch.profiler CUDA activity over graph replays of `layers` blocks; times relative to the end "
                        "of the previous block's last kernel; medians over blocks", evidence=True)


if __name__ == "__main__":
    main()
