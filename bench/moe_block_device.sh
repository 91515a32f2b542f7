#!/usr/bin/env bash
# One device call for the MoE block (issue 29 §2): the GPU tests of the persistent decode experts
# (the block bitwise the chain for every M in 1..16, graph-captured and replayed twice; adversarial
# route metadata through the persistent contract's own handle), the block's cases up to 256 tokens
# and its graph buckets, the grouped dispatch path; then bench/moe_block.py at the decode and mid
# token counts with the torch peers, into OUT/moe_block_h200.json. Each step under its own time limit within BUDGET
# seconds; logs in OUT/tests.txt and OUT/bench.txt.
# usage: bench/moe_block_device.sh BUILD OUT [BUDGET]
#   BUILD needs libnetra.so, tests/test_moe_{block,persistent,grouped_dispatch}_gpu and the sm90a
#   MoE code objects in code_objects/ (the tests' handles load them from there).
set -u
cd "$(dirname "$0")/.."
build=$1
out=$2
budget=${3:-210}
. bench/moe_device_step.sh
step tests.txt 60 "$build/tests/test_moe_block_gpu" --test-case-exclude='*257..768*'
step tests.txt 25 "$build/tests/test_moe_persistent_gpu"
step tests.txt 15 "$build/tests/test_moe_grouped_dispatch_gpu"
step bench.txt 120 python3 bench/moe_block.py --out "$out/moe_block_h200.json" --tokens 1,2,4,8,16,17,24,32,48,64,128,768 \
  --peer-max-tokens 32 --compile-tokens "" --layers 8
grep -h "rc=\|test cases\|assertions\|met\|MISSED" "$out/tests.txt" "$out/bench.txt" | tail -n 40
