"""Where the decode MoE block's time goes at M <= 16 tokens: runs bench/moe_decode_stages.cpp
(<build>/tests/netra-bench-moe-decode-stages) and records

- every variant's line (each chain prefix, each stage alone, fused and unfused) in the evidence
  file, the chain's line with each stage's share of its critical path (a prefix's time minus the
  shorter prefix's);
- the block as dispatched (`moe_block_chain_decode`, one record per M, the fused variant and the
  stages alone beside it) merged into the block's results file by record (its envelope kept).

The roofline is the distinct experts' weight bytes (3 MiB each) over the copy bandwidth measured in
the same run (bench/common.py). The bound policy of the block is test_moe_block_gpu's (run in the
same device call: bench/moe_decode_stages_device.sh); this program checks in its own process that
the fused block writes the unfused block's bits (`bits_equal`).

usage: python3 bench/moe_decode_stages.py --program BIN --out bench/results/moe_block_h200.json \
           --evidence bench/results/evidence/moe_decode_stages_h200.json [--tokens 1,2,4] [--raw LINES]
"""
from __future__ import annotations

import argparse
import json
import subprocess

import common

EXPERT_BYTES = 3 << 20   # W13 2 MiB + W2 1 MiB per distinct expert
M1_TARGET_US = 13.0      # issue 29: the whole block at M = 1, graph-replayed
M16_TARGET_RATIO = 1.15  # ... and at M = 16 against its roofline
PREFIXES = ("router", "router_gate_up", "router_gate_up_act_quant", "chain")
STAGES_ALONE = ("router", "gate_up", "act_quant", "down", "down_fused")
METHOD = ("C++ (moe_block_dispatcher::record with a stage mask), CUDA events around bursts of one call per layer on 8 layers of "
          "257-expert weights (771 MB each, past the L2), eager and captured once into a graph, median of 30 replays per call; "
          "programmatic dependent launch between kernels as the block records them")


def by_tokens(lines: list[dict], bw: float) -> dict:
    """{M: {variant: line}}, each line with its roofline, the chain's with its stage shares."""
    by = {}
    for r in lines:
        r["roofline_us"] = r["distinct_experts"] * EXPERT_BYTES / bw * 1e6
        by.setdefault(r["tokens"], {})[r["variant"]] = r
    for v in by.values():
        share, prev = {}, 0.0
        for p in PREFIXES:
            if p in v:
                share[p] = v[p]["graph_us"] - prev
                prev = v[p]["graph_us"]
        v["chain"]["critical_path_share_us"] = {"router": share.get("router"), "gate_up": share.get("router_gate_up"),
                                                "act_quant": share.get("router_gate_up_act_quant"), "down": share.get("chain")}
    return by


def block_records(by: dict, bw: float, env: dict) -> list[dict]:
    """One moe_block_chain_decode record per M (the chain as the block dispatches it)."""
    records = []
    for m, v in sorted(by.items()):
        c = v["chain"]
        roof = c["roofline_us"]
        target = M1_TARGET_US if m == 1 else M16_TARGET_RATIO * roof if m == 16 else None
        records.append(common.record(
            "moe_block_chain_decode", "netra.MoeBlock C++ (moe_block_dispatcher, variant unfused: router -> gate_up -> act_quant -> down, "
            "as dispatched at 1..16 tokens)", {"tokens": m}, c["graph_us"], c["eager_us"], correct=None,
            comparison="the block's bound policy, checked by test_moe_block_gpu in the same device call, not in this process; here the "
                       "fused block bit for bit the unfused one (bits_equal)",
            peers=[], bytes_moved=c["distinct_experts"] * EXPERT_BYTES, copy_bandwidth=bw, floor_us=None, target_us=target,
            distinct_experts=c["distinct_experts"], bits_equal=all(x["bits_equal"] for x in v.values()),
            critical_path_share_us=c["critical_path_share_us"], fused_graph_us=v["fused"]["graph_us"] if "fused" in v else None,
            stages_alone_graph_us={k: v[k]["graph_us"] for k in STAGES_ALONE if k in v}, method=METHOD, revision=env["git_revision"],
            date=env["date"], copy_bandwidth_bytes_per_s=bw))
    return records


def merge_block_records(path: str, records: list[dict]) -> None:
    """The block's file keeps its envelope (the Python benchmark's run); these records carry their own."""
    with open(path) as f:
        doc = json.load(f)
    tokens = {r["shape"]["tokens"] for r in records}
    doc["records"] = [r for r in doc["records"] if not (r.get("contract") == "moe_block_chain_decode" and r["shape"]["tokens"] in tokens)]
    doc["records"] += records
    bad = common.problems(doc)
    if bad:
        raise ValueError(f"{path}: " + "; ".join(bad[:8]))
    with open(path, "w") as f:
        json.dump(doc, f, indent=2)
        f.write("\n")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--program", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--evidence", required=True)
    ap.add_argument("--tokens", default="1,2,3,4,6,8,12,16")
    ap.add_argument("--raw", help="also write the program's lines here as they come (kept if the run is cut short)")
    a = ap.parse_args()
    bw = common.copy_bandwidth()
    text = ""
    with subprocess.Popen([a.program, a.tokens], stdout=subprocess.PIPE, text=True) as proc:
        raw = open(a.raw, "w") if a.raw else None
        for line in proc.stdout:
            text += line
            if raw:
                raw.write(line)
                raw.flush()
        if proc.wait(timeout=240) != 0:
            raise subprocess.CalledProcessError(proc.returncode, a.program)
    lines = [json.loads(x) for x in text.splitlines() if x.startswith("{")]
    by = by_tokens(lines, bw)
    common.write_family(a.evidence, "moe_decode_stages", lines, bw, evidence=True, method=METHOD)
    merge_block_records(a.out, block_records(by, bw, common.environment()))
    common.print_table(lines, ["tokens", "variant", "graph_us", "eager_us", "roofline_us", "bits_equal"])


if __name__ == "__main__":
    main()
