"""The GQA8 attention floors: bench/attention_read_floor.cu (built by the CMake build as
<build>/tests/attention-read-floor) moves exactly a call's compulsory bytes (BF16 Q in, every
position's FP8 K and V once through the paged indirection, BF16 out) with the grid and launch
structure of netra's mappings and of a few alternatives, with no attention math ("stream"), with
only the launches ("empty"), and with netra's E4M3 -> BF16 widening of the same bytes ("widen").
This script records each time beside the roofline of those bytes at the measured copy bandwidth and
the issue's target for the shape.

usage: python3 bench/attention_floor.py --program build/tests/attention-read-floor --out bench/results/evidence/attention_floor_h200.json
"""
from __future__ import annotations

import common

TARGETS_US = {"decode B=64 L=8192": 140.0, "decode B=1 L=8192": 6.0, "verify Tq=12 L=49152": 20.0}


def main() -> None:
    out_path, lines, bandwidth = common.run_program()
    checks = [r for r in lines if "check" in r]  # the device widening against the host reference, all byte pairs
    records = [r for r in lines if "check" not in r]
    if not checks or any(c["differ"] for c in checks):
        raise SystemExit(f"attention-read-floor: widening check failed: {checks}")
    for r in records:
        r["roofline_us"] = r["bytes"] / bandwidth * 1e6
        r["over_roofline"] = r["graph_us"] / r["roofline_us"]
        r["target_us"] = TARGETS_US.get(r["shape"])
        r["target_below_floor"] = None if r["target_us"] is None or r["mode"] == "widen" else r["graph_us"] > r["target_us"]
    common.print_table(records, ["shape", "mapping", "threads", "slices", "chunk_round", "mode", "graph_us", "roofline_us", "target_us",
                                 "target_below_floor"])
    common.write_family(out_path, "attention_floor", records, bandwidth, evidence=True, widening_checks=checks, method=(
        "bench/attention_read_floor.cu: per call, netra's stage-one grid (slices, 2, batch) moving Q, the slice's K/V rows "
        "(16-byte loads, 16 in flight per thread, slot ids one batch ahead) and writing out or the (m, l, o) workspace, then "
        "for slices > 1 the stage-two grid (2 * 8 * Tq, batch) x 256; netra's grids' slices from slices_for on the device's "
        "SM count; mode widen adds the E4M3 -> BF16 widening of each loaded word; input sets rotate past the L2; burst captured "
        "once into a graph, median of 30 replays per call"))


if __name__ == "__main__":
    main()
