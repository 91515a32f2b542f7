"""Writes docs/results.md and docs/plots/<family>.png from the committed data alone (no GPU, no torch):
the audit (bench/results/audit.json, made by `netra-audit --json`), every family file
bench/results/<family>_h200.json in the results shape (bench/schema.py; a new family appears by
itself), and the evidence files bench/results/evidence/*.json (floors, numerics, timelines).

Plots (matplotlib, Agg backend): per contract, netra (graph-replayed) against the best exact peer, the
fastest peer that is not exact (dashed), the roofline, the measured floor and the target, over the
shape field that varies; log scales where the range is wide. A record that failed its check is drawn
hollow and red, never as a win.

usage: python3 bench/summarize.py [--results bench/results] [--out docs/results.md] [--plots docs/plots]
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from bench.schema import problems  # noqa: E402


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
    if isinstance(v, bool):
        return "yes" if v else "**no**"
    if isinstance(v, float):
        return f"{v:.2e}" if v != 0 and abs(v) < 0.01 else f"{v:.2f}"  # error ratios are ~1e-5
    return str(v)


def _env_line(d) -> str:
    env = d["environment"]
    bw = d.get("copy_bandwidth_bytes_per_s")
    return (f"{env['gpu']}, {env['date']}, revision `{str(env['git_revision'])[:12]}`" +
            (f", copy bandwidth {bw / 1e12:.2f} TB/s (read + write)" if bw else "") + f"; {d['method']}.")


# ---- the audit -------------------------------------------------------------------------------------

def audit_section(audit) -> str:
    if not audit:
        return "_no audit data_\n"
    rows = []
    for k in audit["kernels"]:
        regs = k["vgprs"] if k["target"] != "sm90a" else k["registers"]
        mix = k.get("mix", {})
        rows.append([k["instance"], k["target"], k["kernel"], k["workgroup_size"], regs, k["agprs"] if k["agprs"] >= 0 else None,
                     k["sgprs"] if k["sgprs"] >= 0 else None, k["lds_bytes"], k["scratch_bytes"], k["spills"], k["code_bytes"],
                     k["instructions"], mix.get("mfma", 0) + mix.get("wmma", 0) + mix.get("mma_sync", 0) + mix.get("wgmma", 0), mix.get("cross_lane", 0),
                     mix.get("load_16B", 0), "yes" if k["within_budget"] else "**NO**"])
    return table(rows, ["instance", "target", "kernel", "wg", "VGPR / regs", "AGPR", "SGPR", "LDS B", "scratch B", "spills",
                        "code B", "insts", "mma", "x-lane", "16B loads", "within budget"]) + "\n"


# ---- family files ------------------------------------------------------------------------------------

def family_files(results: str) -> list[tuple[str, dict]]:
    """Every bench/results/*_h200.json in the results shape, by family name."""
    out = []
    for path in sorted(glob.glob(os.path.join(results, "*_h200.json"))):
        d = load(path)
        bad = problems(d) if isinstance(d, dict) else ["not a JSON object"]
        if bad:
            print(f"summarize: {path} is not in the results shape, left out: {bad[0]}", file=sys.stderr)
            continue
        out.append((path, d))
    return out


def by_contract(records: list[dict]) -> dict[str, list[dict]]:
    groups: dict[str, list[dict]] = {}
    for r in records:
        groups.setdefault(r["contract"], []).append(r)
    return groups


def varying_field(records: list[dict]) -> str | None:
    """The shape field whose values differ across the records (the plot's x axis)."""
    keys = [k for k in records[0]["shape"] if all(k in r["shape"] for r in records)]
    for k in keys:
        if len({r["shape"][k] for r in records}) > 1:
            return k
    return keys[0] if keys else None


def fastest_inexact(r: dict) -> dict | None:
    ps = [p for p in r["peers"] if not p["exact"] and p.get("graph_us") is not None]
    return min(ps, key=lambda p: p["graph_us"]) if ps else None


def contract_table(records: list[dict]) -> str:
    fields = list(dict.fromkeys(k for r in records for k in r["shape"]))
    rows = []
    for r in records:
        inexact = fastest_inexact(r)
        rows.append([*(r["shape"].get(k) for k in fields), r["instance"], r["netra_graph_us"], r["netra_eager_us"],
                     "unchecked" if r["correct"] is None else r["correct"],
                     f"{r['best_peer']} {r['best_peer_graph_us']:.2f}" if r["best_peer"] else None, r["speedup_vs_best_peer"],
                     f"{inexact['name']} {inexact['graph_us']:.2f}" if inexact else None,
                     r["roofline_us"], r["floor_us"], r["target_us"], r["meets_target"]])
    return table(rows, [*fields, "instance", "netra graph µs", "netra eager µs", "correct", "best exact peer µs", "× best peer",
                        "fastest inexact peer µs", "roofline µs", "floor µs", "target µs", "meets target"]) + "\n"


def family_section(d: dict, plot_link: str | None) -> str:
    text = _env_line(d) + "\n"
    if d.get("converted_from"):
        text += f"\nConverted from {d['converted_from']}.\n"
    if plot_link:
        text += f"\n![{d['family']}]({plot_link})\n"
    for contract, records in by_contract(d["records"]).items():
        policies = sorted({r["comparison"] for r in records})
        checked_by = sorted({r["correct_by"] for r in records if r.get("correct_by")})
        text += (f"\n### `{contract}`\n\nComparison: " + "; ".join(policies) + "." +
                 (" Checked by: " + "; ".join(checked_by) + "." if checked_by else "") + "\n\n" + contract_table(records))
        notes = sorted({f"{p['name']}: {p['note']}" for r in records for p in r["peers"] if p.get("note")})
        if notes:
            text += "\nPeers: " + "; ".join(notes) + ".\n"
    for key, render in EXTRAS.items():
        value = d.get(key)
        if value:
            text += render(value)
    return text


def mapping_variants(variants) -> str:
    rows = [[v["instance"], v.get("chunks"), v.get("waves_per_workgroup"), v["rows"], v["netra_graph_us"], v.get("stage_one_graph_us")]
            for v in variants]
    return ("\nEvery catalogued instance (graph-replayed µs per call; stage one alone shows what stage two adds):\n\n" +
            table(rows, ["instance", "chunks", "warps / block", "M", "graph µs", "stage one alone µs"]) + "\n")


def routing_diagnostics(routing) -> str:
    text = ""
    for r in routing.get("diagnostics", []):
        if "resident_clusters" in r:
            text += (f"\n`{r['instance']}`: the GPU holds {r['resident_clusters']} of its clusters of {r['cluster_size']} workgroups "
                     f"at once ({r['tokens_per_cluster']} tokens each; more tiles run in waves).\n")
    rows = [[r["kernel"], r["instance"], r["size"], r["graph_us"], r.get("no_pdl_graph_us"), r.get("logits_alone_graph_us"),
             r.get("route_alone_graph_us")] for r in routing.get("diagnostics", []) if "graph_us" in r]
    if rows:
        text += ("\nWhere the routing calls' time goes (graph-replayed µs per call): as shipped, every kernel launched without "
                 "programmatic dependent launch, and the router's two kernels each alone.\n\n" +
                 table(rows, ["kernel", "instance", "size", "as shipped µs", "without PDL µs", "logits alone µs", "route alone µs"]) + "\n")
    return text


def step_toggles(toggles) -> str:
    rows = [[t["batch"], t["family"], t["netra_us"], t["toggled_us"], t["delta_us"]] for t in toggles]
    return ("\nSingle-family toggles (that family on the framework's torch implementation, every other family on netra; the "
            "whole step graph-replayed in AB/BA rounds, medians):\n\n" +
            table(rows, ["B", "family on torch", "netra step µs", "toggled step µs", "delta µs"]) + "\n")


def step_invariants(inv) -> str:
    return (f"\nReplay invariant (B = {inv['batch']}, fixed inputs, pools restored before each): {inv['identical_to_first']} of "
            f"{inv['replays']} replays identical to the first (sha256 {str(inv['sha256_first'])[:16]}…); with changing inputs each "
            f"replay equals its eager step: {inv['changing_inputs_equal_eager']}.\n")


EXTRAS = {"mapping_variants": mapping_variants, "routing": routing_diagnostics, "single_family_toggles": step_toggles,
          "replay_invariants": step_invariants}


# ---- plots -------------------------------------------------------------------------------------------

def plot_family(d: dict, path: str) -> None:
    import matplotlib  # noqa: PLC0415
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415

    groups = by_contract(d["records"])
    cols = min(3, len(groups))
    rows = (len(groups) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(5.2 * cols, 4.0 * rows), squeeze=False)
    for ax, (contract, records) in zip(axes.flat, groups.items()):
        x_field = varying_field(records)
        xs_all = sorted({r["shape"].get(x_field) for r in records})
        index = {v: i for i, v in enumerate(xs_all)}
        numeric = all(isinstance(v, (int, float)) for v in xs_all)
        pos = (lambda v: v) if numeric else (lambda v: index[v])
        instances = list(dict.fromkeys(r["instance"] for r in records))
        for n, inst in enumerate(instances):
            rs = sorted((r for r in records if r["instance"] == inst), key=lambda r: r["shape"].get(x_field))
            xs, ys = [pos(r["shape"].get(x_field)) for r in rs], [r["netra_graph_us"] for r in rs]
            label = "netra" if len(instances) == 1 else f"netra {inst}"
            ax.plot(xs, ys, marker="o", linewidth=2, label=label, zorder=3)
            bad = [(x, y) for x, y, r in zip(xs, ys, rs) if r["correct"] is False]
            if bad:
                ax.scatter(*zip(*bad), s=90, facecolors="none", edgecolors="red", linewidths=2, zorder=4,
                           label="check failed" if n == 0 else None)
        per_x = {}
        for r in records:  # the reference lines: one value per x (the first record's at that x)
            per_x.setdefault(r["shape"].get(x_field), r)
        xs = sorted(per_x)
        def series(get):
            pts = [(pos(x), get(per_x[x])) for x in xs]
            return [p for p in pts if p[1] is not None]
        for label, get, style in (
                ("best exact peer", lambda r: r["best_peer_graph_us"], dict(color="black", marker="s", linestyle="-")),
                ("fastest peer, not exact", lambda r: (fastest_inexact(r) or {}).get("graph_us"), dict(color="gray", marker="^", linestyle="--")),
                ("roofline (bytes / copy bandwidth)", lambda r: r["roofline_us"], dict(color="tab:green", linestyle=":")),
                ("measured floor", lambda r: r["floor_us"], dict(color="tab:purple", marker="d", linestyle="-.")),
                ("target", lambda r: r["target_us"], dict(color="tab:red", marker="x", linestyle="none", markersize=9))):
            pts = series(get)
            if pts:
                if len(pts) < len(xs):  # sparse (a floor measured at some shapes): points, no line between them
                    style = dict(style, linestyle="none")
                ax.plot(*zip(*pts), label=label, **style)
        values = [v for r in records for v in (r["netra_graph_us"], r["best_peer_graph_us"], r["roofline_us"], r["floor_us"],
                                                (fastest_inexact(r) or {}).get("graph_us")) if v]
        if values and max(values) / min(values) > 20:
            ax.set_yscale("log")
        if numeric and len(xs_all) > 1 and min(xs_all) > 0 and max(xs_all) / min(xs_all) >= 16:
            ax.set_xscale("log", base=2)
        if not numeric:
            ax.set_xticks(range(len(xs_all)), [str(v) for v in xs_all])
        elif len(xs_all) <= 8:
            ax.set_xticks(xs_all, [str(v) for v in xs_all])
            ax.minorticks_off()
        ax.set_title(contract)
        ax.set_xlabel(x_field or "")
        ax.set_ylabel("µs per call (graph-replayed)")
        ax.grid(True, which="major", alpha=0.3)
        ax.legend(fontsize=7)
    for ax in list(axes.flat)[len(groups):]:
        ax.axis("off")
    env = d["environment"]
    fig.suptitle(f"{d['family']}: {env['gpu']}, {str(env['date'])[:10]}, revision {str(env['git_revision'])[:12]}")
    fig.tight_layout()
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


# ---- evidence files ------------------------------------------------------------------------------------

def timeline_section(d) -> str:
    text = ""
    for r in d["records"]:
        rows = [[k["kernel"], k["start_us"], k["end_us"], k["critical_path_us"]] for k in r["kernels"]]
        text += (f"\nM = {r['tokens']}: block {r['block_us']:.2f} µs end to end.\n\n" +
                 table(rows, ["kernel", "start µs", "end µs", "critical path µs"]) + "\n")
    return text


def fp8_accumulation_section(d) -> str:
    rows = [[r["case"], r.get("path") or f"torch._scaled_mm, fast accumulation {'on' if r['use_fast_accum'] else 'off'}",
             r["max_err_over_A"], r["median_err_over_A"], r["within_contract_bound"]] for r in d["records"]]
    text = (f"{d['peer']}; one 128-K scale block ({d['shape']['m']} x {d['shape']['k']} x {d['shape']['n']}); error of the block "
            f"sum over A = sum |products|, against the expert contracts' {d['contract_ratio_bound']:.3g}.\n\n" +
            table(rows, ["inputs", "path", "max |D - P| / A", "median |D - P| / A", "within the contract's bound"]) + "\n")
    rates = d.get("matrix_rate")
    if rates:
        rrows = [[r["path"], r["workgroups_per_sm"], r["warps_per_sm"], r["weight_bytes_per_s"] / 1e12] for r in rates]
        text += ("\nThe rate half (`bench/fp8_matrix_rate.cu`): FP8 weight bytes each matrix path consumes from shared memory, "
                 "summed over all SMs, against the DRAM copy bandwidth it would have to keep up with:\n\n" +
                 table(rrows, ["path", "workgroups per SM", "warps per SM", "weight TB/s"]) + "\n")
    return text


def weight_read_rate_section(d) -> str:
    rows = [[r["reader"], r["shape"], r["bytes"] / 2**20, r["us_per_call"], r["bytes_per_s"] / 1e12, r["over_copy_bandwidth"]]
            for r in d["records"]]
    return ("211 and 106 MiB are the decode block's W13 and W2 bytes at 16 tokens.\n\n" +
            table(rows, ["reader", "shape", "MiB per call", "µs per call", "TB/s", "over copy bandwidth"]) + "\n")


def structure_floor_section(d) -> str:
    rows = [[r["tokens"], r["structure"], r["shape"], r["graph_us"], r["after_route_us"], r["weight_roofline_us"], r["over_weight_roofline"],
             r["target_us"], r["within_target"]] for r in d["records"]]
    return (f"Targets: M = 1 {d['m1_block_target_us']} µs; M = 16 {d['m16_block_target_over_roofline']}x the weight roofline.\n\n" +
            table(rows, ["M", "structure", "shape", "µs per call", "after the route µs", "weight roofline µs", "× roofline", "target µs",
                         "within the target"]) + "\n")


def generic_evidence(d) -> str:
    keys = [k for k in d["records"][0] if all(not isinstance(r.get(k), (dict, list)) for r in d["records"])] if d["records"] else []
    return table([[r.get(k) for k in keys] for r in d["records"]], keys) + "\n" if keys else ""


EVIDENCE = {
    "moe_decode_structure_floor": ("The decode MoE block's structure floor (no arithmetic)", structure_floor_section),
    "weight_read_rate": ("How fast the H200 reads weight bytes (nothing else running)", weight_read_rate_section),
    "moe_block_timeline": ("Where the decode MoE block's time goes (one graph replay's timeline)", timeline_section),
    "fp8_accumulation": ("FP8 tensor-core accumulation (cuBLASLt and netra's own instructions)", fp8_accumulation_section),
}


def evidence_sections(results: str) -> list[str]:
    parts = []
    for path in sorted(glob.glob(os.path.join(results, "evidence", "*.json"))):
        d = load(path)
        bad = problems(d, evidence=True)
        if bad:
            print(f"summarize: {path} lacks the results envelope, left out: {bad[0]}", file=sys.stderr)
            continue
        title, render = EVIDENCE.get(d["family"], (d["family"], generic_evidence))
        parts += [f"## {title}\n", f"`{os.path.relpath(path, os.path.dirname(os.path.dirname(results)) or '.')}`: " + _env_line(d) + "\n",
                  render(d)]
    return parts


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--results", default="bench/results")
    p.add_argument("--out", default="docs/results.md")
    p.add_argument("--plots", default=None, help="directory of the PNG plots (default: plots/ beside --out)")
    a = p.parse_args()
    plots = a.plots or os.path.join(os.path.dirname(a.out) or ".", "plots")
    try:
        import matplotlib  # noqa: F401,PLC0415
    except ImportError:
        print("summarize: matplotlib is missing (Debian: apt-get install python3-matplotlib, then run /usr/bin/python3): "
              "plots not made", file=sys.stderr)
        matplotlib = None
    parts = ["# Results\n",
             "Generated by `bench/summarize.py` from `bench/results/*.json` (the results shape: `bench/schema.py`); method in "
             "`docs/benchmarks.md`. Per-family discussion: `docs/kernels/`. Measured-and-not-kept variants: `lab/`.\n",
             "## Audit: every kernel on every target\n",
             "From `netra-audit --json` (`bench/results/audit.json`). gfx950: VGPR/AGPR/SGPR from the AMDGPU metadata, instruction "
             "mix from llvm-objdump; sm90a: registers from the cubin, stack/spills from ptxas, instruction mix from the PTX, "
             "instructions = code bytes / 16.\n",
             audit_section(load(os.path.join(a.results, "audit.json")))]
    for path, d in family_files(a.results):
        link = None
        if matplotlib is not None:
            png = os.path.join(plots, f"{d['family']}.png")
            plot_family(d, png)
            link = os.path.relpath(png, os.path.dirname(os.path.abspath(a.out)))
            print("wrote", png)
        parts += [f"## {d['family']} on the {d['environment']['gpu'].replace('NVIDIA ', '')} (`{os.path.basename(path)}`)\n",
                  family_section(d, link)]
    parts += evidence_sections(a.results)
    os.makedirs(os.path.dirname(a.out) or ".", exist_ok=True)
    with open(a.out, "w") as f:
        f.write("\n".join(parts))
    print("wrote", a.out)
    return 0 if matplotlib is not None else 77


if __name__ == "__main__":
    sys.exit(main())
