"""Probe: the GQA4 extend's served call at B 64, prefix 1024 (the 3-stage warpgroup stage one, 2 slices, then stage two in
its served form, extend_stage_two_rows) launched three times, for ncu on stage two (`-k regex:stage_two -s 2 -c 1`).
Not a benchmark.

usage: python3 lab/attention/extend_stage_two_profile.py OBJECTS [BATCH PREFIX]
"""
import sys

import torch

sys.path.insert(0, __file__.rsplit("/lab/", 1)[0])
from bench import attention_extend as ax  # noqa: E402

objects = sys.argv[1]
batch, prefix = (int(sys.argv[2]), int(sys.argv[3])) if len(sys.argv) > 3 else (64, 1024)
c = ax.Case(batch, prefix, 1, 5)
inst = ax.Warpgroup(objects, 3)
slices = inst.slices_for(batch, torch.cuda.get_device_properties(0).multi_processor_count)
for _ in range(3):
    inst.launch(c, 0, slices)
torch.cuda.synchronize()
print(f"B {batch} P {prefix}: {inst.NAME} at {slices} slices")
