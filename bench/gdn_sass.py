"""Per-opcode counts of the recurrent core's token loop in sm_90a SASS (issue 27: what a state
element costs per token besides its FP32 operations).

Reads `cuobjdump --dump-sass` of one cubin, finds every loop (a BRA to an earlier address), and for
each prints its span and the opcode histogram of its body (the opcode without its modifiers:
FFMA, FMUL, LDS, SHFL, ...). The token loop is the one that holds the state's FFMAs; per state
element per token = count / (state elements a thread).

usage: python3 bench/gdn_sass.py SASS_TEXT [--elements N] [--json]
"""
from __future__ import annotations

import argparse
import collections
import json
import re

LINE = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(@!?U?P\w+\s+)?([A-Z][A-Z0-9_]*)(\.[A-Z0-9_.]+)?\s*([^;]*);")
LABEL = re.compile(r"^\s*(\.L_x_\d+):")


def parse(text):
    """[(address, opcode, operands)] and {label: address of the instruction after it}."""
    code, labels, pending = [], {}, []
    for line in text.splitlines():
        lm = LABEL.match(line)
        if lm:
            pending.append(lm.group(1))
            continue
        m = LINE.search(line)
        if m:
            pc = int(m.group(1), 16)
            for name in pending:
                labels[name] = pc
            pending = []
            code.append((pc, m.group(3), m.group(5)))
    return code, labels


def loops(code, labels):
    """Every backward branch: its target, its address and the body's opcode histogram."""
    out = []
    for pc, op, args in code:
        if op != "BRA":
            continue
        lab = re.search(r"(\.L_x_\d+)", args)
        hexa = re.search(r"0x([0-9a-f]+)", args)
        start = labels.get(lab.group(1)) if lab else int(hexa.group(1), 16) if hexa else None
        if start is not None and start <= pc:
            body = [o for p, o, _ in code if start <= p <= pc]
            out.append({"start": start, "end": pc, "instructions": len(body), "ops": dict(collections.Counter(body).most_common())})
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("sass")
    ap.add_argument("--elements", type=int, default=0, help="state elements a thread (per-element figures)")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    code, labels = parse(open(a.sass).read())
    res = {"instructions": len(code), "ops": dict(collections.Counter(o for _, o, _ in code).most_common()), "loops": loops(code, labels)}
    if a.elements:
        for lp in res["loops"]:
            lp["per_element"] = {k: round(v / a.elements, 3) for k, v in lp["ops"].items()}
            lp["per_element_all"] = round(lp["instructions"] / a.elements, 3)
    if a.json:
        print(json.dumps(res))
    else:
        print(f"{res['instructions']} instructions; loops:")
        for lp in res["loops"]:
            print(f"  [{lp['start']:#x}, {lp['end']:#x}] {lp['instructions']} instructions: " + ", ".join(f"{k} {v}" for k, v in lp["ops"].items()))


if __name__ == "__main__":
    main()
