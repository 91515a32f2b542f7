"""The M = 1 decode MoE block's structure floor: bench/moe_decode_structure_floor.cu (built by the
CMake build as <build>/tests/moe-decode-structure-floor) times, with no arithmetic at all, a stand-in
router followed by the block's weight streams (9 routes: 18 MiB of W13, 9 MiB of W2, chosen by the
ids it wrote) in netra's four-kernel chain and in one persistent kernel; this script records each
structure's time per call beside the roofline of those bytes at the device-to-device copy bandwidth
(bench/common.py) and the issue's M = 1 target.

usage: python3 bench/moe_decode_structure_floor.py --program build/tests/moe-decode-structure-floor --out bench/results/moe_decode_structure_floor_h200.json
"""
from __future__ import annotations

import argparse
import json
import subprocess

import common

TARGET_US = 10.0  # issue 4: the whole decode MoE block at M = 1, graph-replayed


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--program", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    bandwidth = common.copy_bandwidth()
    out = subprocess.run([a.program], check=True, capture_output=True, text=True, timeout=120).stdout
    records = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    for r in records:
        r["weight_roofline_us"] = r["weight_bytes"] / bandwidth * 1e6
        r["below_m1_target"] = r["structure"] != "route" and r["graph_us"] <= TARGET_US
    common.print_table(records, ["structure", "shape", "graph_us", "after_route_us", "weight_roofline_us", "below_m1_target"])
    common.write_results(a.out, "moe_decode_structure_floor", records, {
        "copy_bandwidth_bytes_per_s": bandwidth,
        "m1_block_target_us": TARGET_US,
        "method": "per call: a one-warp route stand-in, then the structure (no arithmetic: every piece of weight bytes is "
                  "folded into one word); 8 layers of 257 experts rotate so a burst reads past the L2; burst captured "
                  "once into a graph, median of 30 replays per call; programmatic dependent launch between kernels",
    })


if __name__ == "__main__":
    main()
