"""How busy each SM pipe is in the decode block's expert kernels at 16 tokens (Nsight Compute).

Question: is the ~3 us of each expert GEMM's arithmetic that its weight stream does not hide
(docs/kernels/moe-experts.md, lab/notes/moe-experts.md) a throughput limit of some pipe (the E4M3 -> FP16 conversions of the emulated
mma.sync, the matrix pipe, the ALU) or latency?

Two modes:
  python3 lab/moe/expert_pipes.py --workload
      one decode block at M = 16 (router, gate_up, act_quant, down), then down alone three times:
      the workload Nsight Compute profiles on the GPU, e.g.
        ncu --clock-control none --metrics "$METRICS" -k regex:expert_down --launch-skip 1 \\
            --launch-count 1 --page raw --csv python3 lab/moe/expert_pipes.py --workload > down.csv
      with METRICS = regex:^sm__pipe_.*_cycles_active\\.avg\\.pct_of_peak_sustained_active$,
      regex:^sm__inst_executed_pipe_.*\\.sum$, gpu__time_duration.sum,
      dram__throughput.avg.pct_of_peak_sustained_elapsed (and -k regex:expert_gate_up /
      regex:act_quant --launch-count 1 for the block's gate_up and act_quant);
  python3 lab/moe/expert_pipes.py --revision REV --out PATH KERNEL=CSV ...
      the profiles' pipe figures as JSON (lab/moe/data/moe_expert_pipes_h200.json).
"""
from __future__ import annotations

import argparse
import csv
import datetime
import json
import os
import sys


def workload() -> None:
    import torch

    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    from bench.moe_block import make_layer
    from netra.moe_experts import MoeBlock, MoeExperts

    layer = make_layer(1)
    experts, block = MoeExperts(), MoeBlock()
    h = torch.randn(16, 2048, device="cuda").to(torch.bfloat16)
    b = block.buffers(16)
    block(h, layer["router"], layer["shared"], layer["w13"], layer["s13"], layer["w2"], layer["s2"], b)
    torch.cuda.synchronize()
    for _ in range(3):
        experts.down(b["act"], b["ids"], b["route_weights"], layer["w2"], layer["s2"], act_scales=b["act_scales"], out=b["out"])
    torch.cuda.synchronize()


def parse(path: str) -> dict:
    rows = [r for r in csv.reader(open(path)) if len(r) > 10]
    names, values = rows[0], rows[2]  # header, units, the one profiled launch
    record: dict = {"kernel": values[names.index("Kernel Name")], "grid": values[names.index("Grid Size")],
                    "workgroup": values[names.index("Block Size")], "device": values[names.index("device__attribute_display_name")]
                    if "device__attribute_display_name" in names else None}
    pipes, instructions = {}, {}
    for name, value in zip(names, values):
        try:
            number = float(value.replace(",", ""))
        except ValueError:
            continue
        if name.startswith("sm__pipe_") and name.endswith("_cycles_active.avg.pct_of_peak_sustained_active"):
            pipes[name.removeprefix("sm__pipe_").removesuffix("_cycles_active.avg.pct_of_peak_sustained_active")] = number
        elif name.startswith("sm__inst_executed_pipe_") and name.endswith(".sum") and number > 0:
            instructions[name.removeprefix("sm__inst_executed_pipe_").removesuffix(".sum")] = int(number)
        elif name == "gpu__time_duration.sum":
            record["duration_ns"] = number
        elif name == "dram__throughput.avg.pct_of_peak_sustained_elapsed":
            record["dram_pct_of_peak"] = number
    record["pipe_active_pct"] = {k: v for k, v in sorted(pipes.items(), key=lambda kv: -kv[1]) if v > 0}
    record["warp_instructions"] = dict(sorted(instructions.items(), key=lambda kv: -kv[1]))
    return record


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--workload", action="store_true")
    p.add_argument("--revision", default="")
    p.add_argument("--date", default=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"))
    p.add_argument("--out", default="lab/moe/data/moe_expert_pipes_h200.json")
    p.add_argument("profiles", nargs="*", help="KERNEL=CSV (ncu --page raw --csv)")
    a = p.parse_args()
    if a.workload:
        workload()
        return
    records = []
    for arg in a.profiles:
        label, path = arg.split("=", 1)
        records.append({"profile": label, **parse(path)})
    doc = {"benchmark": "moe_expert_pipes", "environment": {"gpu": "NVIDIA H200", "date": a.date, "git_revision": a.revision},
           "method": "Nsight Compute --page raw over one launch of each kernel (kernels serialised, caches flushed, clocks not "
                     "locked); pipe_active_pct = sm__pipe_*_cycles_active.avg.pct_of_peak_sustained_active", "records": records}
    with open(a.out, "w") as f:
        json.dump(doc, f, indent=2)
        f.write("\n")


if __name__ == "__main__":
    main()
