"""bench/summarize.py makes the results page and one plot per family file from the JSON alone.

Runs it on a copy of bench/results to which a synthetic family (`synthetic_h200.json`, built with
bench/schema.py's record()) and a malformed file are added, writing into a temporary directory, and
checks: results.md has the audit, every family's section and a link to its plot; every family file
(the committed ones and the synthetic one) has a PNG plot; the malformed file is left out. Without
matplotlib it says so and exits 77 (skipped).

usage: python3 tests/tools/check_summarize.py [--root DIR]
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    root = p.parse_args().root
    try:
        import matplotlib  # noqa: F401,PLC0415
    except ImportError:
        print(f"SKIP: matplotlib is not importable by {sys.executable} (Debian: python3-matplotlib)")
        return 77
    sys.path.insert(0, root)
    from bench.schema import family_document, peer, problems, record  # noqa: PLC0415

    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        results = os.path.join(tmp, "results")
        shutil.copytree(os.path.join(root, "bench", "results"), results)
        env = {"gpu": "NVIDIA H200", "sms": 132, "l2_bytes": 62914560, "torch": "2.11.0", "cuda": "13.0",
               "date": "2026-12-01T00:00:00+00:00", "git_revision": "0000000"}
        recs = [record("synthetic_op", "synthetic-sm90a", {"rows": m}, 2.0 * m, 3.0 * m, m != 64, "bitwise",
                       [peer("torch", 5.0 * m, True), peer("fast but wrong", 1.0 * m, False, note="inexact")],
                       1e6 * m, 4e12, floor_us=1.5 * m, target_us=2.5 * m) for m in (1, 4, 16, 64)]
        doc = family_document("synthetic", env, 4e12, "synthetic records of the checker", recs)
        assert not problems(doc), problems(doc)
        with open(os.path.join(results, "synthetic_h200.json"), "w") as f:
            json.dump(doc, f)
        with open(os.path.join(results, "malformed_h200.json"), "w") as f:
            json.dump({"family": "malformed", "records": [{"rows": 1}]}, f)

        families = []
        for path in sorted(glob.glob(os.path.join(results, "*_h200.json"))):
            with open(path) as f:
                d = json.load(f)
            if not problems(d):
                families.append(d["family"])
        if "synthetic" not in families or "malformed" in families:
            failures.append(f"schema check picked the wrong family files: {families}")
        committed = [f for f in families if f != "synthetic"]
        if not committed:
            failures.append("no committed family file in bench/results is in the results shape")

        out, plots = os.path.join(tmp, "docs", "results.md"), os.path.join(tmp, "docs", "plots")
        r = subprocess.run([sys.executable, os.path.join(root, "bench", "summarize.py"), "--results", results, "--out", out,
                            "--plots", plots], capture_output=True, text=True)
        print(r.stdout + r.stderr)
        if r.returncode != 0:
            failures.append(f"summarize.py exited {r.returncode}")
        text = open(out).read() if os.path.exists(out) else ""
        if "## Audit" not in text:
            failures.append("results.md has no audit section")
        for fam in families:
            png = os.path.join(plots, f"{fam}.png")
            if not os.path.exists(png):
                failures.append(f"no plot for family {fam}")
                continue
            with open(png, "rb") as f:
                head = f.read(8)
            if head != b"\x89PNG\r\n\x1a\n" or os.path.getsize(png) < 10_000:
                failures.append(f"{png} is not a PNG plot ({os.path.getsize(png)} bytes)")
            if f"## {fam} " not in text or f"plots/{fam}.png" not in text:
                failures.append(f"results.md has no section or plot link for {fam}")
        if "malformed" in text or os.path.exists(os.path.join(plots, "malformed.png")):
            failures.append("the malformed file was not left out")
        if "check failed" not in text and "**no**" not in text:
            failures.append("the synthetic record whose check failed is not shown as failed")
    for f in failures:
        print("FAIL", f)
    print(f"summarize: {len(families)} family files ({', '.join(families)}); {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
