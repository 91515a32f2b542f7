"""Where each workgroup of the decode block's expert kernels spends its time (a timing probe, not shipped).

Needs a library built with lab/moe/block_trace.patch (lab/build.sh REV PATCH DIR): the
resident gate_up, act_quant and down then write %globaltimer at their start, after their wait (down: also
after its schedule) and at their end, and their SM, into mapped host memory named by NETRA_TRACE, which this
script allocates. It captures bench/moe_block.py's 8-layer block as one CUDA graph at M = 16 and 12, replays
it four times and prints per kernel the spread of those times (us from the first gate_up workgroup past its
wait); the raw records go to $OUT/trace.json (lab/moe/data/moe_block_trace_h200.json).

With --probe spread it reads the layout of lab/moe/down_act_quant_spread_trace.patch instead
(act_quant spread over down's workgroups: no act_quant kernel; down also writes the time after thread 0's
quantization and after the grid barrier), at M = 16 and 4, three replays, into $OUT/trace.json
(lab/moe/data/moe_down_act_quant_spread_trace_h200.json; at M = 4 gate_up is not probed and times count
from the first down workgroup past its wait).

usage: NETRA_LIBRARY=DIR/libnetra.so PYTHONPATH=python python3 lab/moe/block_trace.py [--probe spread]
"""
import os, sys, json, statistics, torch
buf = torch.zeros(8192, dtype=torch.int64, pin_memory=True)
os.environ["NETRA_TRACE"] = hex(buf.data_ptr())
sys.path.insert(0, ".")
from bench.moe_block import make_layer
from netra.moe_experts import MoeBlock
layers = [make_layer(2000 + i) for i in range(8)]
block = MoeBlock()
spread = sys.argv[1:] == ["--probe", "spread"]
out = {}
for m in ((16, 4) if spread else (16, 12)):
    g = torch.Generator(device="cuda").manual_seed(1000 + m)
    hs = [torch.randn(m, 2048, device="cuda", generator=g).to(torch.bfloat16) for _ in layers]
    bufs = [block.buffers(m) for _ in layers]
    def burst():
        for i, L in enumerate(layers):
            block(hs[i], L["router"], L["shared"], L["w13"], L["s13"], L["w2"], L["s2"], bufs[i])
    burst(); torch.cuda.synchronize()
    stream = torch.cuda.Stream(); graph = torch.cuda.CUDAGraph()
    with torch.cuda.stream(stream):
        with torch.cuda.graph(graph, stream=stream):
            burst()
    recs = []
    for rep in range(3 if spread else 4):
        buf.zero_()
        graph.replay(); torch.cuda.synchronize()
        b = buf.tolist()
        gu = [b[i*6:i*6+6] for i in range(512)] if m >= 10 else []
        if spread:
            dn = [b[4096+i*8:4096+i*8+8] for i in range(128)]
            aq = []
            t0 = min(r[1] for r in gu) if gu else min(r[2] for r in dn)
        else:
            dn = [b[3072+i*6:3072+i*6+6] for i in range(128)]
            aq = [b[3840+i*4:3840+i*4+4] for i in range(36 if m == 16 else 27)]
            t0 = min(r[1] for r in gu)  # the first gate_up workgroup past its wait (about the router's end)
        rel = lambda x: (x - t0) / 1000.0 if x else None
        down_fields = ("start", "schedule", "wait", "quant", "barrier", "end") if spread else ("start", "schedule", "wait", "end")
        rec = {"tokens": m, "replay": rep,
               "gate_up": [{"start": rel(r[0]), "wait": rel(r[1]), "end": rel(r[2]), "items": r[3], "sm": r[4]} for r in gu],
               "act_quant": [{"start": rel(r[0]), "wait": rel(r[1]), "end": rel(r[2]), "sm": r[3]} for r in aq],
               "down": [dict(zip(down_fields + ("sm", "units"), [rel(x) for x in r[:len(down_fields)]] + r[len(down_fields):len(down_fields) + 2])) for r in dn]}
        recs.append(rec)
        def q(v):
            v = sorted(x for x in v if x is not None); n = len(v)
            return f"min {v[0]:6.2f} p10 {v[n//10]:6.2f} p50 {v[n//2]:6.2f} p90 {v[(9*n)//10]:6.2f} max {v[-1]:6.2f}" if n else "-"
        print(f"M={m} replay {rep}")
        for k, fields in (("gate_up", ("start", "wait", "end", "items")), ("act_quant", ("start", "wait", "end")), ("down", down_fields + ("units",))):
            for f in fields:
                if rec[k]:
                    print(f"  {k:9s} {f:8s} {q([r[f] for r in rec[k]])}")
        if rec["gate_up"] and rec["act_quant"]:
            gu_end = max(r["end"] for r in rec["gate_up"])
            print("  down workgroups started before gate_up's last end:", sum(r["start"] < gu_end for r in rec["down"]),
                  " act_quant SMs:", sorted(set(r["sm"] for r in rec["act_quant"])),
                  " down SMs shared with act_quant:", len(set(r["sm"] for r in rec["down"]) & set(r["sm"] for r in rec["act_quant"])))
    out[str(m)] = recs
json.dump(out, open(os.environ.get("OUT", "/tmp") + "/trace.json", "w"))
