#!/usr/bin/env bash
# One device call for the persistent decode experts (issue 29 §2): their GPU test (adversarial
# route metadata through their own handle, bitwise the chain), then bench/moe_persistent.py (the
# block with them against the chain at M in {1, 2, 4, 8, 12, 16}, and the kernel alone at sm90a
# Stages 1, 2, 3, into OUT/moe_block_h200.json merged over the committed file's other records),
# then the block's GPU cases (bitwise the chain for every M in 1..16, eager and graph-replayed
# twice; the 1..16-token policy case) and the stage kernels' GPU test. Each step under its own
# time limit within BUDGET seconds; logs in OUT/tests.txt and OUT/bench.txt.
# usage: bench/moe_persistent_device.sh BUILD OUT [BUDGET]
#   BUILD needs libnetra.so, tests/test_moe_{persistent,block,experts}_gpu,
#   tests/netra-bench-moe-persistent and the sm90a MoE code objects in code_objects/.
set -u
cd "$(dirname "$0")/.."
build=$1
out=$2
budget=${3:-150}
. bench/moe_device_step.sh
step tests.txt 25 "$build/tests/test_moe_persistent_gpu"
cp bench/results/moe_block_h200.json "$out/moe_block_h200.json"
step bench.txt 50 python3 bench/moe_persistent.py --program "$build/tests/netra-bench-moe-persistent" --out "$out/moe_block_h200.json"
step tests.txt 45 "$build/tests/test_moe_block_gpu" --test-case='*persistent*,*1..16 tokens*'
step tests.txt 25 "$build/tests/test_moe_experts_gpu"
grep -h "rc=\|test cases\|assertions\|FAILED\|ERROR" "$out/tests.txt" "$out/bench.txt" | tail -n 30
cat "$out/bench.txt" | tail -n 20
