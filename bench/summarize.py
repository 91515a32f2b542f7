"""Writes docs/results.md from the committed data: the audit (bench/results/audit.json, made by
`netra-audit --json`) and the H200 benchmark results (bench/results/*_h200.json).

usage: python3 bench/summarize.py [--results bench/results] [--out docs/results.md]
"""
from __future__ import annotations

import argparse
import json
import os


def load(path: str):
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)


def table(rows: list[list], header: list[str]) -> str:
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for r in rows:
        out.append("| " + " | ".join(_cell(v) for v in r) + " |")
    return "\n".join(out)


def _cell(v) -> str:
    if v is None:
        return "–"
    if isinstance(v, float):
        return f"{v:.2e}" if v != 0 and abs(v) < 0.01 else f"{v:.2f}"  # error ratios are ~1e-5
    return str(v)


def audit_section(audit) -> str:
    if not audit:
        return "_no audit data_\n"
    rows = []
    for k in audit["kernels"]:
        regs = k["vgprs"] if k["target"] != "sm90a" else k["registers"]
        mix = k.get("mix", {})
        rows.append([k["instance"], k["target"], k["kernel"], k["workgroup_size"], regs, k["agprs"] if k["agprs"] >= 0 else None,
                     k["sgprs"] if k["sgprs"] >= 0 else None, k["lds_bytes"], k["scratch_bytes"], k["spills"], k["code_bytes"],
                     k["instructions"], mix.get("mfma", 0) + mix.get("mma_sync", 0) + mix.get("wgmma", 0), mix.get("cross_lane", 0),
                     mix.get("load_16B", 0), "yes" if k["within_budget"] else "**NO**"])
    return table(rows, ["instance", "target", "kernel", "wg", "VGPR / regs", "AGPR", "SGPR", "LDS B", "scratch B", "spills",
                        "code B", "insts", "mma", "x-lane", "16B loads", "within budget"]) + "\n"


def argmax_section(d) -> str:
    if not d:
        return "_not measured_\n"
    rows = [[r["rows"], r["netra_graph_us"], r["netra_eager_us"], r["torch_graph_us"], r["torch_eager_us"], r["compile_graph_us"],
             r["roofline_us"], r.get("read_floor_graph_us"), r["pct_of_copy_bandwidth_graph"], r["speedup_vs_torch_graph"]]
            for r in d["records"]]
    env = d["environment"]
    head = (f"{env['gpu']}, {env['date']}, revision `{env['git_revision']}`, copy bandwidth "
            f"{d['copy_bandwidth_bytes_per_s'] / 1e12:.2f} TB/s (read + write); torch.compile exact: {d['compile_peer_exact']}; "
            f"netra = `{d.get('served_instance', d.get('reference_instance'))}` (the instance dispatch serves). Read floor: the "
            "fastest of the `bench/argmax_read_floor.cu` variants, a kernel that only reads the rows.\n\n")
    text = head + table(rows, ["M", "netra graph µs", "netra eager µs", "torch graph µs", "torch eager µs", "compile graph µs",
                               "roofline µs", "read floor µs", "% copy BW (graph)", "× torch (graph)"]) + "\n"
    variants = d.get("mapping_variants")
    if variants:
        vrows = [[v["instance"], v.get("chunks"), v["waves_per_workgroup"], v["rows"], v["netra_graph_us"], v["stage_one_graph_us"]]
                 for v in variants]
        text += ("\nEvery sm90a instance (graph-replayed µs per call; stage one alone shows what stage two adds):\n\n" +
                 table(vrows, ["instance", "chunks", "warps / block", "M", "graph µs", "stage one alone µs"]) + "\n")
    return text


def routing_section(d) -> str:
    if not d:
        return "_not measured_\n"
    rows = [[r["family"], r["instance"], r["size"], r["netra_graph_us"], r["netra_eager_us"], r["torch_graph_us"], r["compile_graph_us"],
             "yes" if r["torch_exact"] else "no", "yes" if r["compile_exact"] else "no", r.get("copy_floor_graph_us"), r.get("read_floor_graph_us"), r["target_graph_us"],
             None if r["meets_target"] is None else ("yes" if r["meets_target"] else "**no**")] for r in d["records"]]
    env = d["environment"]
    text = (f"{env['gpu']}, {env['date']}, revision `{env['git_revision']}`. Size: rows R for act_quant, tokens M otherwise. "
            "A peer is exact only if it reproduces netra's contract byte for byte. Copy floor (act_quant): the fastest "
            "`bench/act_quant_copy_floor.cu` variant, a kernel that only moves act_quant's bytes, timed the same way; read floor: "
            "the fastest of its read-only variants, a bound under any kernel that reads act_quant's input.\n\n" +
            table(rows, ["kernel", "instance", "size", "netra graph µs", "netra eager µs", "torch graph µs", "compile graph µs",
                         "torch exact", "compile exact", "copy floor µs", "read floor µs", "target µs", "meets"]) + "\n")
    diagnostics = [r for r in d.get("diagnostics", []) if "graph_us" in r]
    for r in d.get("diagnostics", []):
        if "resident_clusters" in r:
            text += (f"\n`{r['instance']}`: the GPU holds {r['resident_clusters']} of its clusters of {r['cluster_size']} workgroups "
                     f"at once ({r['tokens_per_cluster']} tokens each; more tiles run in waves).\n")
    if diagnostics:
        drows = [[r["kernel"], r["instance"], r["size"], r["graph_us"], r.get("no_pdl_graph_us"), r.get("logits_alone_graph_us"),
                  r.get("route_alone_graph_us")] for r in diagnostics]
        text += ("\nWhere the time goes (graph-replayed µs per call): the call as shipped, the call with every kernel launched "
                 "without programmatic dependent launch, and the router's two kernels each alone.\n\n" +
                 table(drows, ["kernel", "instance", "size", "as shipped µs", "without PDL µs", "logits alone µs", "route alone µs"]) + "\n")
    return text


def block_section(d) -> str:
    if not d:
        return "_not measured_\n"
    def g(r, k):
        v = r.get(k)
        return v["graph_us"] if v else None
    rows = [[r["tokens"], r["distinct_experts_per_call"], r["roofline_us"], g(r, "netra_block"), g(r, "netra_block_fused"),
             r["netra_block"]["eager_us"], g(r, "netra_gate_up"), g(r, "netra_down"), g(r, "torch_block"), g(r, "compile_block"),
             r["block_graph_over_roofline"],
             f'{r["check_netra_gate_up"]["failures"]} / {r["check_netra_down"]["failures"]}'] for r in d["records"]]
    env = d["environment"]
    return (f"{env['gpu']}, {env['date']}, revision `{env['git_revision']}`; roofline = weight bytes of the distinct experts "
            "(E4M3 + scales) over the measured copy bandwidth. Policy failures: elements outside the stated GEMM bound "
            "(gate_up / down) vs the FP64 reference.\n\n" +
            table(rows, ["M", "experts", "roofline µs", "block graph µs", "block (fused down) graph µs", "block eager µs",
                         "gate_up graph µs", "down graph µs", "torch block graph µs", "compile block graph µs", "× roofline",
                         "policy failures"]) + "\n" + expert_peers_table(d))


def expert_peers_table(d) -> str:
    """gate_up and down alone against their torch and torch.compile peers (graph / eager µs), with
    each peer's elements outside the policy on call 0."""
    def t(r, k):
        v = r.get(k)
        return f'{v["graph_us"]:.2f} / {v["eager_us"]:.2f}' if v and "eager_us" in v else (f'{v["graph_us"]:.2f}' if v else None)
    def f(r, k):
        v = r.get("check_" + k)
        return v["failures"] if v else None
    rows = [[r["tokens"], t(r, "netra_gate_up"), t(r, "torch_gate_up"), f(r, "torch_gate_up"), t(r, "compile_gate_up"),
             f(r, "compile_gate_up"), t(r, "netra_down"), t(r, "torch_down"), f(r, "torch_down"), t(r, "compile_down"),
             f(r, "compile_down")] for r in d["records"]]
    return ("\nThe expert kernels alone against their peers (graph / eager µs; failures: the peer's elements outside the "
            "policy on call 0, given netra's route metadata and act_quant output):\n\n" +
            table(rows, ["M", "netra gate_up", "torch gate_up", "failures", "compile gate_up", "failures", "netra down", "torch down",
                         "failures", "compile down", "failures"]) + "\n")


def timeline_tables(records, label="") -> str:
    """One table per token count of bench/moe_block_timeline.py records."""
    text = ""
    for r in records:
        rows = [[k["kernel"], k["start_us"], k["end_us"], k["critical_path_us"]] for k in r["kernels"]]
        text += f"\n{label}M = {r['tokens']}: block {r['block_us']:.2f} µs end to end.\n\n" + table(rows, ["kernel", "start µs", "end µs", "critical path µs"]) + "\n"
    return text


def timeline_section(d) -> str:
    if not d:
        return "_not measured_\n"
    env = d["environment"]
    return (f"{env['gpu']}, {env['date']}, revision `{env['git_revision']}`; one CUDA graph of blocks replayed under the torch "
            "profiler; times relative to the end of the previous block; a kernel's critical-path share is its end minus its "
            "predecessor's end (with programmatic dependent launch it starts early and waits).\n" + timeline_tables(d["records"]))


def fp8_accumulation_section(d) -> str:
    if not d:
        return "_not measured_\n"
    rows = [[r["case"], r.get("path") or f"torch._scaled_mm, fast accumulation {'on' if r['use_fast_accum'] else 'off'}", r["max_err_over_A"], r["median_err_over_A"], r["within_contract_bound"]] for r in d["records"]]
    env = d["environment"]
    return (f"{env['gpu']}, {env['date']}, revision `{env['git_revision']}`; {d['peer']}; one 128-K scale block "
            f"({d['shape']['m']} x {d['shape']['k']} x {d['shape']['n']}); error of the block sum over A = sum |products|, "
            f"against the expert contracts' {d['contract_ratio_bound']:.3g}.\n\n" +
            table(rows, ["inputs", "path", "max |D - P| / A", "median |D - P| / A", "within the contract's bound"]) + "\n" +
            matrix_rate_table(d.get("matrix_rate")))


def matrix_rate_table(rates) -> str:
    """bench/fp8_matrix_rate.cu: weight bytes per second each path consumes from shared memory, all SMs."""
    if not rates:
        return ""
    rows = [[r["path"], r["workgroups_per_sm"], r["warps_per_sm"], r["weight_bytes_per_s"] / 1e12] for r in rates]
    return ("\nThe rate half (`bench/fp8_matrix_rate.cu`): FP8 weight bytes each matrix path consumes from shared memory, "
            "summed over all SMs, against the DRAM copy bandwidth it would have to keep up with (about 4.2 TB/s):\n\n" +
            table(rows, ["path", "workgroups per SM", "warps per SM", "weight TB/s"]) + "\n")


def weight_read_rate_section(d) -> str:
    """bench/weight_read_rate.cu: how fast the GPU reads weight bytes in each staging shape, nothing else running."""
    if not d:
        return "_not measured_\n"
    env = d["environment"]
    rows = [[r["reader"], r["shape"], r["bytes"] / 2**20, r["us_per_call"], r["bytes_per_s"] / 1e12, r["over_copy_bandwidth"]] for r in d["records"]]
    return (f"{env['gpu']}, {env['date']}, revision `{env['git_revision']}`; {d['method']}; copy bandwidth "
            f"{d['copy_bandwidth_bytes_per_s'] / 1e12:.2f} TB/s (read + write, the block roofline's). 211 and 106 MiB are the decode "
            "block's W13 and W2 bytes at 16 tokens.\n\n" +
            table(rows, ["reader", "shape", "MiB per call", "µs per call", "TB/s", "over copy bandwidth"]) + "\n")


def structure_floor_section(d) -> str:
    """bench/moe_decode_structure_floor.cu: the block's dependences and weight streams with no arithmetic."""
    if not d:
        return "_not measured_\n"
    env = d["environment"]
    rows = [[r["tokens"], r["structure"], r["shape"], r["graph_us"], r["after_route_us"], r["weight_roofline_us"], r["over_weight_roofline"],
             r["target_us"], "" if r["within_target"] is None else ("yes" if r["within_target"] else "no")] for r in d["records"]]
    return (f"{env['gpu']}, {env['date']}, revision `{env['git_revision']}`; {d['method']}. Targets: M = 1 "
            f"{d['m1_block_target_us']} µs; M = 16 {d['m16_block_target_over_roofline']}x the weight roofline.\n\n" +
            table(rows, ["M", "structure", "shape", "µs per call", "after the route µs", "weight roofline µs", "× roofline", "target µs",
                         "within the target"]) + "\n")


def library_runs_section(d, intro) -> str:
    """Decode-block runs of several libraries (bench/variants/collect.py): one row per library, call or
    pass, and M (gate_up and down alone, the whole block); `intro(env, d)` opens the section."""
    if not d:
        return "_not measured_\n"
    runs = d["runs"]
    rows = [[r["variant"], r["device_call"], m, r["tokens"][m]["gate_up_graph_us"], r["tokens"][m]["down_graph_us"],
             r["tokens"][m]["block_graph_us"]] for r in runs for m in sorted(r["tokens"], key=int)]
    return intro(runs[0]["environment"], d) + "\n\n" + table(rows, ["library", "call / pass", "M", "gate_up µs", "down µs", "block µs"]) + "\n"


def variants_section(d) -> str:
    """bench/variants: timing probes of the expert kernels (patches, not shipped), per device call."""
    return library_runs_section(d, lambda env, _: (f"{env['gpu']}, {env['date'][:10]}; `bench/variants/README.md` says what each variant "
                                                   "changes (several compute wrong values on purpose: timing only); graph-replayed µs."))


def block_runs_section(d) -> str:
    """Decode-block runs with their method: the gate_up schedule threshold runs, the resident unit loop."""
    return library_runs_section(d, lambda env, d: (f"{env['gpu']}, {env['date'][:19]}, revision `{env['git_revision']}`; {d['method']}; "
                                                   "gate_up and down alone (the C ABI calls) and the whole block, graph-replayed µs."))


def block_runs_with_timelines_section(d) -> str:
    """block_runs_section and, where the collection has them, each variant's timeline."""
    if not d:
        return "_not measured_\n"
    return block_runs_section(d) + "".join(timeline_tables(t["records"], f"Timeline of `{t['variant']}`, ") for t in d.get("timelines", []))


# Decode-block runs of several libraries (bench/variants/collect.py), in the order docs/results.md shows them.
BLOCK_RUNS = [
    ("gate_up's schedule in the decode block on the H200 (route scan or unit list)", "moe_gate_up_schedule_h200.json"),
    ("gate_up as a resident grid looping over the unit list (static: not kept; dynamic: shipped)", "moe_gate_up_persistent_h200.json"),
    ("gate_up's resident grid listing its units itself (Schedule resident; shipped as `new`)", "moe_gate_up_resident_h200.json"),
    ("The resident schedule below 10 tokens (not kept)", "moe_gate_up_resident_threshold_h200.json"),
    ("act_quant's mapping and gate_up's resident grid size in the decode block (not kept)", "moe_block_tail_variants_h200.json"),
    ("The block without act_quant (timing bound, wrong values)", "moe_block_without_act_quant_h200.json"),
    ("The resident grid on every SM (528 workgroups; not kept)", "moe_gate_up_resident_528_h200.json"),
    ("down computing its units before act_quant ends (timing bounds, wrong values)", "moe_down_compute_before_wait_h200.json"),
    ("Two weight stages per resident gate_up workgroup (not kept)", "moe_gate_up_resident_two_stages_h200.json"),
    ("gate_up's hidden quantization: timing bounds and the hidden quantized once (not kept)", "moe_gate_up_hidden_quantization_h200.json"),
]


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--results", default="bench/results")
    p.add_argument("--out", default="docs/results.md")
    a = p.parse_args()
    parts = ["# Results\n", "Generated by `bench/summarize.py` from `bench/results/*.json`; method in `docs/benchmarks.md`.\n",
             "## Audit: every kernel on every target\n",
             "From `netra-audit --json` (`bench/results/audit.json`). gfx950: VGPR/AGPR/SGPR from the AMDGPU metadata, instruction "
             "mix from llvm-objdump; sm90a: registers from the cubin, stack/spills from ptxas, instruction mix from the PTX, "
             "instructions = code bytes / 16.\n",
             audit_section(load(os.path.join(a.results, "audit.json"))),
             "## argmax on the H200\n", argmax_section(load(os.path.join(a.results, "argmax_h200.json"))),
             "## MoE routing kernels on the H200\n", routing_section(load(os.path.join(a.results, "moe_routing_h200.json"))),
             "## Decode MoE block on the H200\n", block_section(load(os.path.join(a.results, "moe_block_h200.json"))),
             "## How fast the H200 reads weight bytes (nothing else running)\n",
             weight_read_rate_section(load(os.path.join(a.results, "weight_read_rate_h200.json"))),
             "## The decode block's structure floor (no arithmetic) on the H200\n",
             structure_floor_section(load(os.path.join(a.results, "moe_decode_structure_floor_h200.json"))),
             "## Where the decode block's time goes on the H200\n",
             timeline_section(load(os.path.join(a.results, "moe_block_timeline_h200.json"))),
             *[part for title, name in BLOCK_RUNS
               for part in (f"## {title}\n", block_runs_with_timelines_section(load(os.path.join(a.results, name))))],
             "## FP8 tensor-core accumulation on the H200 (cuBLASLt and netra's own instructions)\n",
             fp8_accumulation_section(load(os.path.join(a.results, "fp8_accumulation_h200.json"))),
             "## Timing probes of the expert kernels on the H200\n",
             variants_section(load(os.path.join(a.results, "moe_expert_variants_h200.json")))]
    with open(a.out, "w") as f:
        f.write("\n".join(parts))
    print("wrote", a.out)


if __name__ == "__main__":
    main()
