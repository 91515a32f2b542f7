"""Served GQA8 decode cubins against a lab build of the same instances on the H200 (lab row attention_decode_weight_of_max): bits and
graph-replayed time in alternating rounds. usage: python3 lab/attention/decode_variant_compare.py SERVED_OBJECTS LAB_OBJECTS"""
import sys, statistics
sys.path.insert(0, ".")
import torch
from bench import common
from bench.attention import Case, Instance
served_dir, lab_dir = sys.argv[1], sys.argv[2]
sms = torch.cuda.get_device_properties(0).multi_processor_count
forms = [("B64 8x0", dict(bw=8, stages=0, cap=512, split=1), [8192] * 64), ("B16 2x0", dict(bw=2, stages=0, cap=512, split=1), [8192] * 16),
         ("B4 2x0", dict(bw=2, stages=0, cap=512, split=1), [8192] * 4), ("B1 2x0/4", dict(bw=2, stages=0, cap=512, split=4), [8192]),
         ("B128 2x0 wide", dict(bw=2, stages=0, cap=512, split=1, max_batch=128), [8192] * 128)]
for name, kw, lengths in forms:
    insts = {d: Instance(d, 0, 1, 1, kw["bw"], kw["stages"], cap=kw["cap"], split=kw["split"], **({"max_batch": kw["max_batch"]} if "max_batch" in kw else {})) for d in (served_dir, lab_dir)}
    probe_bytes = sum(lengths) * 2 * 2 * 256
    sets = min(common.rotation(probe_bytes), 32)
    c = Case(lengths, 1, sets, 7)
    slices = insts[served_dir].slices_for(len(lengths), sms)
    outs = {}
    for d, inst in insts.items():
        c.out[0].fill_(float("nan")); inst.launch(c, 0, slices); torch.cuda.synchronize(); outs[d] = c.out[0].clone()
    differ = int((outs[served_dir].view(torch.int16) != outs[lab_dir].view(torch.int16)).sum())
    t = {d: [] for d in insts}
    for rnd in range(3):
        for d in (list(insts) if rnd % 2 == 0 else list(insts)[::-1]):
            t[d].append(common.bench_graph([lambda s=s, inst=insts[d]: inst.launch(c, s, slices) for s in range(sets)], reps=15)["median_us"])
    print(f"{name} slices {slices}: served {statistics.median(t[served_dir]):.2f} {[round(x,2) for x in t[served_dir]]} | lab {statistics.median(t[lab_dir]):.2f} {[round(x,2) for x in t[lab_dir]]} | {differ} of {outs[served_dir].numel()} differ", flush=True)
    del c; torch.cuda.empty_cache()
