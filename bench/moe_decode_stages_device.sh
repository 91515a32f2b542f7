#!/usr/bin/env bash
# One device call for the decode MoE block at M <= 16 (issue 29 §2): the cluster router's GPU cases
# (bitwise), the block's GPU cases of 1..16 tokens and its graph buckets, then
# bench/moe_decode_stages.py (each chain prefix, each stage alone, fused and unfused) into
# OUT/moe_block_h200.json
# (a copy of the committed file, merged by record) and OUT/moe_decode_stages_h200.json; logs in
# OUT/tests.txt and OUT/bench.txt (the program's lines as they came in OUT/stages_lines.jsonl),
# nvidia-smi's clocks in OUT/gpu.txt.
# usage: bench/moe_decode_stages_device.sh BUILD OUT [BUDGET] [TOKENS]
#   BUILD holds libnetra.so, tests/test_moe_block_gpu, tests/test_moe_routing_gpu and
#   tests/netra-bench-moe-decode-stages (the block's code objects are embedded in libnetra; the
#   routing test reads BUILD/code_objects); BUILD/revision, when present, names the commit.
set -u
cd "$(dirname "$0")/.."
build=$1
out=$2
budget=${3:-150}
tokens=${4:-1,2,3,4,6,8,12,16}
. bench/moe_device_step.sh
export LD_LIBRARY_PATH="$build${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
[ -f "$build/revision" ] && export NETRA_GIT_REVISION=$(cat "$build/revision")
cp bench/results/moe_block_h200.json "$out/moe_block_h200.json"
step tests.txt 25 "$build/tests/test_moe_routing_gpu" --test-case='*one cluster kernel*'
step tests.txt 40 "$build/tests/test_moe_block_gpu" --test-case='*1..16 tokens*,*graph buckets*'
step bench.txt 90 python3 bench/moe_decode_stages.py --program "$build/tests/netra-bench-moe-decode-stages" --out "$out/moe_block_h200.json" \
  --evidence "$out/moe_decode_stages_h200.json" --tokens "$tokens" --raw "$out/stages_lines.jsonl"
grep -h "rc=\|test cases\|assertions\|ERROR\|Error" "$out/tests.txt" "$out/bench.txt" | tail -n 20
