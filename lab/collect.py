"""Collects decode-block benchmark runs of measured variants (lab/moe/*.patch) into one
JSON: per variant and token count, the graph-replayed medians of gate_up alone, down alone and
the whole block, with each run's environment (GPU, date, revision of the base tree).

usage: python3 lab/collect.py [--benchmark NAME --method TEXT] NAME[@CALL]=moe_block.json ...
           [timeline:NAME=moe_block_timeline.json ...] > lab/moe/data/moe_expert_variants_h200.json
       NAME is the variant (shipped = the base tree unchanged); CALL numbers the device calls (a call that
       timed a variant twice kept the last pass in its file). --benchmark / --method name other
       collections (lab/moe/data/moe_gate_up_schedule_h200.json: the gate_up schedule threshold runs).
       A timeline:NAME argument adds a variant's bench/moe_block_timeline.py records (each kernel's start,
       end and share of the critical path) under "timelines".
"""
from __future__ import annotations

import json
import sys


def main(argv: list[str]) -> None:
    benchmark, method = "moe_expert_variants", "bench/moe_block.py per variant library (lab/moe/README.md)"
    while argv and argv[0] in ("--benchmark", "--method"):
        if argv[0] == "--benchmark":
            benchmark = argv[1]
        else:
            method = argv[1]
        argv = argv[2:]
    runs, timelines = [], []
    for arg in argv:
        label, path = arg.split("=", 1)
        if label.startswith("timeline:"):
            with open(path) as f:
                data = json.load(f)
            timelines.append({"variant": label.removeprefix("timeline:"), "environment": data["environment"], "records": data["records"]})
            continue
        name, _, call = label.partition("@")
        with open(path) as f:
            data = json.load(f)
        runs.append({
            "variant": name,
            "device_call": int(call or 1),
            "environment": data["environment"],
            "copy_bandwidth_bytes_per_s": data["copy_bandwidth_bytes_per_s"],
            "tokens": {
                str(r["tokens"]): {
                    "distinct_experts": r["distinct_experts_per_call"],
                    "roofline_us": r["roofline_us"],
                    "gate_up_graph_us": r["netra_gate_up"]["graph_us"],
                    "down_graph_us": r["netra_down"]["graph_us"],
                    "block_graph_us": r["netra_block"]["graph_us"],
                }
                for r in data["records"]
            },
        })
    out = {"benchmark": benchmark, "method": method, "runs": runs}
    if timelines:
        out["timelines"] = timelines
    json.dump(out, sys.stdout, indent=2)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main(sys.argv[1:])
