"""The decode MoE block with the persistent experts against the chain (issue 29 §2):
bench/moe_persistent_bench.cpp (built as <build>/tests/netra-bench-moe-persistent) times the block
(router -> experts) at M in {1, 2, 4, 8, 12, 16} with its experts as the chain (gate_up, act_quant,
down) and as contracts::moe_expert_persistent in one process, eager and graph-replayed, 8 layers
rotating past the L2, after checking the persistent block bit for bit against the chain on call 0
of every layer. This script records them into the moe family file by record (contracts
moe_block_persistent and moe_block_chain_decode; the other records of the file stay), each with the
roofline of the distinct experts' weight bytes at the copy bandwidth measured in the same run, and
the issue's targets (M = 1 <= 13 us; M = 16 <= 1.15x roofline); and the persistent kernel alone
at sm90a Stages 1, 2 and 3 (contract moe_expert_persistent, shape.stages), each checked bit for
bit against the chain.

usage: python3 bench/moe_persistent.py --program build/tests/netra-bench-moe-persistent --out bench/results/moe_block_h200.json
"""
from __future__ import annotations

import common

EXPERT_BYTES = 3 << 20  # W13 2 MiB + W2 1 MiB per expert
CONTRACTS = ("moe_block_persistent", "moe_block_chain_decode", "moe_expert_persistent")


def target_us(tokens: int, roofline_us: float) -> float | None:
    return 13.0 if tokens == 1 else 1.15 * roofline_us if tokens == 16 else None


def main() -> None:
    out_path, rows, bandwidth = common.run_program()
    by_key = {(r["tokens"], r["variant"]): r for r in rows}
    records = []
    for (tokens, variant), r in sorted(by_key.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        nbytes = r["distinct_experts"] * EXPERT_BYTES
        roofline = nbytes / bandwidth * 1e6
        chain = by_key.get((tokens, "chain"))
        if variant == "persistent":
            peers = [common.peer("netra chain (router -> gate_up -> act_quant -> down), same run", chain["graph_us"], exact=True,
                                 eager_us=chain["eager_us"], note="the block's dispatched experts; the persistent contract's reference")] if chain else []
            records.append(common.record(
                "moe_block_persistent", "moe block, variant persistent: router -> moe-experts-persistent-sm90a-16", {"tokens": tokens},
                r["graph_us"], r["eager_us"], correct=r["persistent_equals_chain"],
                comparison="bitwise against the chain (ids, route weights, gate_up, act, act_scales, out) on call 0 of every layer",
                peers=peers, bytes_moved=nbytes, copy_bandwidth=bandwidth, target_us=target_us(tokens, roofline),
                distinct_experts=r["distinct_experts"]))
        elif variant.startswith("experts_stages_"):
            stages = int(variant.rsplit("_", 1)[1])
            records.append(common.record(
                "moe_expert_persistent", f"moe-experts-persistent-sm90a-16-{stages}", {"tokens": tokens, "stages": stages},
                r["graph_us"], r["eager_us"], correct=r["persistent_equals_chain"],
                comparison="bitwise against the chain (gate_up, act, act_scales, out) on call 0 of every layer",
                peers=[], bytes_moved=nbytes, copy_bandwidth=bandwidth, distinct_experts=r["distinct_experts"]))
        else:
            records.append(common.record(
                "moe_block_chain_decode", "moe block, variant unfused (the block's dispatch at 1..16 tokens)", {"tokens": tokens},
                r["graph_us"], r["eager_us"], correct=None,
                comparison="the bound policy of the block, checked by test_moe_block_gpu in the same device call, not in this process",
                peers=[], bytes_moved=nbytes, copy_bandwidth=bandwidth, target_us=target_us(tokens, roofline),
                distinct_experts=r["distinct_experts"]))
    common.print_table(records, ["contract", "shape", "netra_graph_us", "netra_eager_us", "correct", "roofline_us", "speedup_vs_best_peer",
                                 "target_us", "meets_target"])
    common.merge_family(out_path, "moe", records, lambda rec: rec.get("contract") in CONTRACTS, bandwidth, method=(
        "median per call over 30 bursts of one call per layer (8 layers, each its own 257-expert weights); graph = burst captured "
        "once and replayed; persistent and chain in one process (bench/moe_persistent_bench.cpp)"))


if __name__ == "__main__":
    main()
