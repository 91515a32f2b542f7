"""The normalization kernels' floor: bench/norm_floor.cu (built by the CMake build as
<build>/tests/norm-floor) moves exactly the bytes of each norm call with the grid, workgroup,
chunk-to-thread map, load/store instructions and launch (programmatic dependent launch, the same
release points, the same looping grid) of each contracts::norm mapping that dispatch ships or the
benchmark compares, and no arithmetic (`move`), or with the row's and the FP8 group's butterflies
(`move_reduce`); a cudaMemcpyAsync of half the call's bytes each way is the copy reference. This
script records each one's time per call beside the roofline of its bytes at the device-to-device
copy bandwidth (bench/common.py), measured in the same run.

usage: python3 bench/norm_floor.py --program build/tests/norm-floor --out bench/results/evidence/norm_floor_h200.json
       python3 bench/norm_floor.py --lines FILE --out ...   (the program's JSON lines of a run made before)
"""
from __future__ import annotations

import argparse
import json
import sys

import common

# The mappings dispatch ships (contracts::norm_decode / norm_prefill on sm90a): WavesPerRow-R-Resident[-Split].
DISPATCHED = {("decode", False): "2-1-0", ("prefill", False): "2-1-0", ("decode", True): "1-2-0", ("prefill", True): "1-16-0"}


def dispatched(record: dict) -> bool:
    gated = record["contract"].startswith("gated")
    decode = record["tokens"] <= 64
    if decode and record["contract"] == "add_rms_norm_fp8":
        return record["mapping"] == "2-1-0-2"
    if decode and record["contract"] == "gated_rms_norm_fp8" and record["tokens"] > 16:  # 8 heads a workgroup from 17 tokens
        return record["mapping"] == "1-8-0"
    return record["mapping"] == DISPATCHED[("decode" if decode else "prefill", gated)]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lines", help="the program's JSON lines of a run made before (read, not run again)")
    a, _ = ap.parse_known_args()
    if a.lines:
        out_path = sys.argv[sys.argv.index("--out") + 1]
        with open(a.lines) as f:
            records = [json.loads(line) for line in f if line.startswith("{")]
        bandwidth = common.copy_bandwidth()
    else:
        out_path, records, bandwidth = common.run_program()
    for r in records:
        r["roofline_us"] = r["bytes"] / bandwidth * 1e6
        r["over_roofline"] = r["graph_us"] / r["roofline_us"]
        r["dispatched_mapping"] = r["mapping"] != "cudaMemcpyAsync" and dispatched(r)
    common.print_table(records, ["contract", "tokens", "mapping", "variant", "grid", "workgroup", "graph_us", "roofline_us", "over_roofline",
                                 "dispatched_mapping"])
    common.write_family(out_path, "norm_floor", records, bandwidth, evidence=True, method=(
        "per call: the norm's bytes (x, r or z, the weight read; out, scales, r' written) moved by the mapping's grid and "
        "threads with its 16-byte loads and stores, every output word an input word xor the weight xor a fold of the "
        "thread's loads (no output before its thread's loads arrive); move_reduce adds the row's and the FP8 group's "
        "xor butterflies; a burst of calls, each on its own input and output set (sets >= 3x L2, at most 4096), "
        "captured once into a graph, median of 30 replays per call; programmatic dependent launch between calls, the "
        "successor released at start for <= 64 tokens and after the stores above"))


if __name__ == "__main__":
    main()
