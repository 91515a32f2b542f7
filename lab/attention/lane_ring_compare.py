"""bench/attention_profile.py with the lane ring's LDS for the new objects only (issue 26, row
attention_direct_lane_ring; used by the attention-check call of 2026-12-02).

lab/attention/direct_lane_ring.patch adds attention_gqa8::lane_ring_bytes (131,072 B for sm90a Stages 0,
BlockSplit 1, BlockWarps 8) to the contract and to bench/attention.py's Instance.lds. The tree's
bench/attention.py is unpatched, and one Instance class serves both cubin sets of --mode compare, so here
the instances loaded from $LANE_RING_OBJECTS (default .carry-attention/code_objects) and only those of that
mapping get the extra bytes (dynamic LDS and per_sm recomputed as Instance does); the baseline's instances
keep the LDS they are served with. $COMPARE_CASES (comma-separated indices into bench/attention_profile.py's
COMPARE) picks and orders the compared cases. Everything else is bench/attention_profile.py's main().

usage: LANE_RING_OBJECTS=DIR COMPARE_CASES=0,5,6,7 python3 lab/attention/lane_ring_compare.py <attention_profile.py args>
"""
from __future__ import annotations

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)
from bench import attention, attention_profile  # noqa: E402

LANE_RING_BYTES = 4 * 8 * 8 * 32 * 16  # lane_ring * warps * 8 pieces * wave_size * 16 B
NEW = os.path.realpath(os.environ.get("LANE_RING_OBJECTS", os.path.join(ROOT, ".carry-attention/code_objects")))
_init = attention.Instance.__init__


def _init_lane_ring(self, objects, phase, tq, page, bw, stages, *args, **kwargs):
    _init(self, objects, phase, tq, page, bw, stages, *args, **kwargs)
    if os.path.realpath(objects) == NEW and stages == 0 and self.split == 1 and bw == 8 and tq == 1:
        self.lds += LANE_RING_BYTES
        self.per_sm = max(1, min((227 * 1024 + 1024) // (self.lds + 1024), 65536 // (256 * self.threads)))
        attention.check(attention.cuda.cuFuncSetAttribute(self.one, 8, self.lds), "max dynamic shared (lane ring)")
        print(f"lane ring: {self.name} from {objects} launched with {self.lds} B LDS", flush=True)


attention.Instance.__init__ = _init_lane_ring
if os.environ.get("COMPARE_CASES"):
    attention_profile.COMPARE = [attention_profile.COMPARE[int(i)] for i in os.environ["COMPARE_CASES"].split(",")]

if __name__ == "__main__":
    attention_profile.main()
