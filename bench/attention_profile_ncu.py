"""Summarises bench/attention_profile_device.sh's ncu report exports: per profiled kernel (named by the
driver's launch manifest) the duration, throughput, occupancy, issue and memory metrics and every
warp-state stall ratio from the raw page, and from the source page the stall samples summed per SASS
opcode with the instructions that drew the most samples.

usage: python3 bench/attention_profile_ncu.py --raw raw.csv --source source.csv --manifest ncu_run.txt --out FILE.json
"""
from __future__ import annotations

import argparse
import csv
import io
import json
import re

KEY = ["gpu__time_duration.sum", "sm__cycles_elapsed.avg", "smsp__cycles_active.avg", "sm__throughput.avg.pct_of_peak_sustained_elapsed",
       "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed", "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
       "dram__bytes.sum.per_second", "gpc__cycles_elapsed.avg.per_second",
       "dram__bytes_read.sum", "dram__bytes_write.sum", "lts__t_sector_hit_rate.pct", "l1tex__t_sector_hit_rate.pct",
       "lts__throughput.avg.pct_of_peak_sustained_elapsed", "l1tex__throughput.avg.pct_of_peak_sustained_active",
       "sm__warps_active.avg.pct_of_peak_sustained_active", "sm__maximum_warps_per_active_cycle_pct",
       "smsp__warps_active.avg.per_cycle_active", "smsp__warps_eligible.avg.per_cycle_active",
       "smsp__issue_active.avg.pct_of_peak_sustained_active", "smsp__inst_executed.avg.per_cycle_active", "smsp__inst_executed.sum",
       "sm__inst_executed.sum", "smsp__average_warp_latency_per_inst_issued.ratio", "launch__registers_per_thread", "launch__grid_size",
       "launch__block_size", "launch__occupancy_limit_registers", "launch__occupancy_limit_shared_mem", "launch__waves_per_multiprocessor",
       "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active", "sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active"]


def number(x: str):
    try:
        return float(x.replace(",", ""))
    except ValueError:
        return x


def raw_rows(path: str) -> list[dict]:
    text = open(path, errors="replace").read()
    start = text.find('"ID"')
    rows = list(csv.reader(io.StringIO(text[start:])))
    header, units, data = rows[0], rows[1], rows[2:]
    out = []
    for r in data:
        if len(r) != len(header):
            continue
        d = dict(zip(header, r))
        d["_units"] = dict(zip(header, units))
        out.append(d)
    return out


def summarise_raw(d: dict) -> dict:
    s = {k: number(d[k]) for k in KEY if k in d}
    s["units"] = {k: d["_units"].get(k, "") for k in s}
    # warp-state stall reasons: warps stalled per issue-active cycle (the WarpStateStats ratios) and pc samples
    s["stall_per_issue"] = {k.split("issue_stalled_")[1].split("_per_")[0]: number(d[k]) for k in d
                            if k.startswith("smsp__average_warps_issue_stalled_") and k.endswith("_per_issue_active.ratio")}
    s["stall_samples"] = {k.split("issue_stalled_")[1].split(".")[0]: number(d[k]) for k in d
                          if k.startswith("smsp__pcsamp_warps_issue_stalled_") and not k.endswith("_not_issued")}
    for key in ("stall_per_issue", "stall_samples"):
        s[key] = dict(sorted(((k, v) for k, v in s[key].items() if isinstance(v, float) and v > 0), key=lambda kv: -kv[1]))
    return s


def source_blocks(path: str) -> list[tuple[list[str], list[list[str]]]]:
    """The source page's CSV: a header row (with 'Source') per kernel, then its instructions."""
    blocks = []
    for r in csv.reader(open(path, errors="replace")):
        if not r:
            continue
        if "Source" in r and any("Address" in c for c in r):
            blocks.append((r, []))
        elif blocks and len(r) == len(blocks[-1][0]):
            blocks[-1][1].append(r)
    return blocks


def summarise_source(header: list[str], rows: list[list[str]]) -> dict:
    src = header.index("Source")
    numeric = [i for i, h in enumerate(header) if i != src and rows and all(isinstance(number(r[i]), float) for r in rows[:50])
               and "Address" not in h]
    by_op: dict[str, dict[str, float]] = {}
    for r in rows:
        op = re.sub(r"^@!?U?P\w+\s+", "", r[src].strip()).split(" ")[0]
        agg = by_op.setdefault(op, {"count": 0})
        agg["count"] += 1
        for i in numeric:
            v = number(r[i])
            agg[header[i]] = agg.get(header[i], 0.0) + (v if isinstance(v, float) else 0.0)
    samples = next((h for h in header if h.startswith("Warp Stall Sampling (All")), None)
    out = {"instructions": len(rows), "columns": [header[i] for i in numeric]}
    if samples:
        si = header.index(samples)
        total = sum(number(r[si]) for r in rows if isinstance(number(r[si]), float)) or 1.0
        out["samples_total"] = total
        out["by_opcode"] = dict(sorted(by_op.items(), key=lambda kv: -kv[1].get(samples, 0.0))[:25])
        top = sorted(rows, key=lambda r: -(number(r[si]) if isinstance(number(r[si]), float) else 0.0))[:30]
        out["top_instructions"] = [{"address": r[0], "source": r[src].strip()[:120], "samples": number(r[si]),
                                    **{header[i]: number(r[i]) for i in numeric if number(r[i]) not in (0.0,) and "Stall" not in header[i]}}
                                   for r in top]
    else:
        out["by_opcode"] = dict(sorted(by_op.items(), key=lambda kv: -kv[1]["count"])[:25])
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--raw", required=True)
    ap.add_argument("--source")
    ap.add_argument("--manifest")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    names = []
    if a.manifest:
        names = [m.group(1) for m in re.finditer(r"^launch \d+: (.*)$", open(a.manifest, errors="replace").read(), re.M)]
    kernels = []
    for i, d in enumerate(raw_rows(a.raw)):
        k = {"launch": names[i] if i < len(names) else None, "kernel": d.get("Kernel Name"), "grid": d.get("Grid Size"),
             "block": d.get("Block Size"), **summarise_raw(d)}
        kernels.append(k)
    if a.source:
        try:
            for i, (h, rows) in enumerate(source_blocks(a.source)):
                if i < len(kernels):
                    kernels[i]["source"] = summarise_source(h, rows)
        except Exception as e:  # the source page's layout differs between ncu versions: keep the raw summary
            print(f"source page not summarised: {e!r}")
    json.dump({"kernels": kernels}, open(a.out, "w"), indent=1)
    for k in kernels:
        print(f"--- {k['launch']} | {k['kernel']} grid {k['grid']} block {k['block']}")
        print("  " + ", ".join(f"{n}={k[n]}" for n in KEY if n in k))
        print("  stalls/issue: " + ", ".join(f"{n} {v:.2f}" for n, v in list(k["stall_per_issue"].items())[:10]))
        print("  samples: " + ", ".join(f"{n} {v:.0f}" for n, v in list(k["stall_samples"].items())[:10]))
        if "source" in k and "by_opcode" in k["source"]:
            print("  by opcode: " + "; ".join(f"{op} x{v['count']}" for op, v in list(k["source"]["by_opcode"].items())[:12]))


if __name__ == "__main__":
    main()
