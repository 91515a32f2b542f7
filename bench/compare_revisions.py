"""Times two builds of netra against each other in one GPU process tree, in A B B A order.

Each revision directory holds what its own benchmarks need: `libnetra.so`, the C++ bench
programs `netra-bench-argmax` and `netra-bench-moe-routing`, and its own `python/` and `bench/`
(so each revision is timed by its own code). Per round the revision runs:
  - netra-bench-argmax: the dispatched argmax instance at rows 1, 16, 128;
  - netra-bench-moe-routing: act_quant at 9 and 4608 rows, the router at 1 token;
  - bench/moe_block.py --tokens 1,16: the whole decode block (graph-replayed).
Figures are graph-replayed medians per call as each program measures them; the result per
revision is the median over its rounds, and `ratio` = new / base (< 1: the new one is faster).

usage: python3 bench/compare_revisions.py --base DIR --new DIR --out FILE [--rounds 2]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile


def json_lines(text):
    return [json.loads(line) for line in text.splitlines() if line.startswith("{")]


def run(cmd, env=None):
    print("$", " ".join(cmd), flush=True)
    return subprocess.run(cmd, check=True, capture_output=True, text=True, env=env).stdout


def argmax_figures(d):
    rows = json_lines(run([os.path.join(d, "netra-bench-argmax")]))
    served = rows[0]["instance"]
    return {f"argmax M={r['rows']}": r["netra_graph_us"] for r in rows if r["instance"] == served and r["rows"] in (1, 16, 128)}


def routing_figures(d):
    out = {}
    for r in json_lines(run([os.path.join(d, "netra-bench-moe-routing")])):
        if r.get("family") == "act_quant" and r["rows"] in (9, 4608):
            key = f"act_quant R={r['rows']}"
        elif r.get("family") == "router" and r["tokens"] == 1 and not r.get("shared_gate"):
            key = "router M=1"
        else:
            continue
        out[key] = min(out.get(key, float("inf")), r["netra_graph_us"])
    return out


def block_records(data):
    """(tokens, graph_us) of the whole block in either result shape (schema records or the older rows)."""
    for r in data.get("records", []):
        if "netra_block" in r and "tokens" in r:
            yield r["tokens"], r["netra_block"]["graph_us"]
        elif "block" in r.get("contract", "") and "tokens" in r.get("shape", {}):
            yield r["shape"]["tokens"], r["netra_graph_us"]


def block_figures(d):
    env = dict(os.environ, PYTHONPATH=os.path.join(d, "python"), NETRA_LIBRARY=os.path.join(d, "libnetra.so"))
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "block.json")
        run([sys.executable, os.path.join(d, "bench", "moe_block.py"), "--tokens", "1,16", "--compile-tokens", "", "--out", out], env)
        with open(out) as f:
            data = json.load(f)
    return {f"block M={m}": us for m, us in block_records(data) if m in (1, 16)}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--base", required=True)
    p.add_argument("--new", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--rounds", type=int, default=2, help="each round is A B B A")
    a = p.parse_args()
    revs = {"base": a.base, "new": a.new}
    samples = {"base": {}, "new": {}}
    order = []
    for _ in range(a.rounds):
        for name in ("base", "new", "new", "base"):
            order.append(name)
            figures = {**argmax_figures(revs[name]), **routing_figures(revs[name]), **block_figures(revs[name])}
            for k, v in figures.items():
                samples[name].setdefault(k, []).append(v)
            print(name, json.dumps(figures), flush=True)
    table = []
    for k in sorted(set(samples["base"]) | set(samples["new"])):
        b = statistics.median(samples["base"].get(k, [float("nan")]))
        n = statistics.median(samples["new"].get(k, [float("nan")]))
        table.append({"figure": k, "base_us": b, "new_us": n, "ratio": n / b, "within_3pct_or_faster": n <= 1.03 * b,
                      "base_samples": samples["base"].get(k, []), "new_samples": samples["new"].get(k, [])})
    with open(a.out, "w") as f:
        json.dump({"order": order, "method": "graph-replayed medians per call as each revision's own programs measure them; "
                   "median over rounds; A B B A order in one device run", "figures": table}, f, indent=1)
    for r in table:
        print(f"{r['figure']:>18}: base {r['base_us']:8.2f}  new {r['new_us']:8.2f}  ratio {r['ratio']:.3f}")


if __name__ == "__main__":
    main()
