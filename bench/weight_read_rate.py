"""How fast the GPU reads weight bytes when nothing else runs: bench/weight_read_rate.cu (built by
the CMake build as <build>/tests/weight-read-rate) streams the decode MoE block's W13 and W2
bytes at 16 tokens (211 and 106 MiB) and a 1 GiB stream through several readers — the decode
kernels' bulk-copy staging shapes (gate_up: 4 workgroups per SM with one 32 KiB stage; down: 24
stages of 8 KiB per SM) and others — and this script records each reader's rate beside the
device-to-device copy bandwidth that the block's roofline divides by (bench/common.py).

usage: python3 bench/weight_read_rate.py --program build/tests/weight-read-rate --out bench/results/evidence/weight_read_rate_h200.json
"""
from __future__ import annotations

import common


def main() -> None:
    out_path, records, bandwidth = common.run_program()
    for r in records:
        r["over_copy_bandwidth"] = r["bytes_per_s"] / bandwidth
    common.print_table(records, ["reader", "shape", "bytes", "us_per_call", "bytes_per_s", "over_copy_bandwidth"])
    common.write_family(out_path, "weight_read_rate", records, bandwidth, evidence=True, method=(
        "one kernel per call reading `bytes` of a 2 GiB buffer (each call of a burst its own window, the burst >= 3x the L2), "
        "burst captured once into a graph, median of 30 replays per call; no programmatic dependent launch "
        "(each call pays a kernel boundary)"))


if __name__ == "__main__":
    main()
