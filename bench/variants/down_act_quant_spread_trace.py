"""Per-workgroup times of the decode block with act_quant spread over down's workgroups (a timing probe,
not shipped). Needs a library built from 82367bd with bench/variants/down_act_quant_spread.patch and then
bench/variants/down_act_quant_spread_trace.patch: the resident gate_up writes %globaltimer at its start,
after its wait and at its end; down at its start, after its schedule, after its wait, after thread 0's
quantization, after the grid barrier and at its end, with its SM and unit count, into mapped host memory
named by NETRA_TRACE (allocated here). Captures bench/moe_block.py's 8-layer block as one CUDA graph at
M = 16 and 4, replays it three times, prints the spread of each time and writes $OUT/trace.json
(bench/results/moe_down_act_quant_spread_trace_h200.json).

usage: NETRA_LIBRARY=DIR/libnetra.so PYTHONPATH=python python3 bench/variants/down_act_quant_spread_trace.py
"""
import os, sys, json, torch
buf = torch.zeros(8192, dtype=torch.int64, pin_memory=True)
os.environ["NETRA_TRACE"] = hex(buf.data_ptr())
sys.path.insert(0, ".")
from bench.moe_block import make_layer
from netra.moe_experts import MoeBlock
layers = [make_layer(2000 + i) for i in range(8)]
block = MoeBlock()
out = {}
for m in (16, 4):
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
    for rep in range(3):
        buf.zero_()
        graph.replay(); torch.cuda.synchronize()
        b = buf.tolist()
        gu = [b[i*6:i*6+6] for i in range(512)] if m >= 10 else []
        dn = [b[4096+i*8:4096+i*8+8] for i in range(128)]
        t0 = min(r[1] for r in gu) if gu else min(r[2] for r in dn)
        rel = lambda x: (x - t0) / 1000.0 if x else None
        rec = {"tokens": m, "replay": rep,
               "gate_up": [{"start": rel(r[0]), "wait": rel(r[1]), "end": rel(r[2]), "items": r[3], "sm": r[4]} for r in gu],
               "down": [{"start": rel(r[0]), "schedule": rel(r[1]), "wait": rel(r[2]), "quant": rel(r[3]), "barrier": rel(r[4]), "end": rel(r[5]), "sm": r[6], "units": r[7]} for r in dn]}
        recs.append(rec)
        def q(v):
            v = sorted(x for x in v if x is not None); n = len(v)
            return f"min {v[0]:7.2f} p10 {v[n//10]:7.2f} p50 {v[n//2]:7.2f} p90 {v[(9*n)//10]:7.2f} max {v[-1]:7.2f}" if n else "-"
        print(f"M={m} replay {rep}")
        for k, fields in (("gate_up", ("start", "wait", "end")), ("down", ("start", "schedule", "wait", "quant", "barrier", "end"))):
            if not rec[k]: continue
            for f in fields:
                print(f"  {k:9s} {f:8s} {q([r[f] for r in rec[k]])}")
        print("  distinct down SMs", len(set(r["sm"] for r in rec["down"])))
    out[str(m)] = recs
json.dump(out, open(os.environ.get("OUT", "/tmp") + "/trace.json", "w"))
