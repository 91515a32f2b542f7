#!/usr/bin/env bash
# One device call for the MoE family (issue 29): the GPU tests (the whole block across 1..768 and
# its graph buckets, the routers, the grouped dispatch path), the grouped floor, then the
# benchmarks, each step under its own time limit within BUDGET seconds. Writes at most five files
# into OUT: moe_h200.json (the family's records: a copy of bench/results/moe_h200.json that the
# benchmark scripts merge into), moe_grouped_floor_h200.json, tests.txt, bench.txt, gpu.txt.
# usage: bench/moe_device.sh BUILD OUT [BUDGET]
set -u
cd "$(dirname "$0")/.."
build=$1
out=$2
budget=${3:-290}
. bench/moe_device_step.sh
cp bench/results/moe_h200.json "$out/moe_h200.json"
step tests.txt 100 "$build/tests/test_moe_block_gpu"
step tests.txt 35 "$build/tests/test_moe_routing_gpu"
step tests.txt 15 "$build/tests/test_moe_grouped_dispatch_gpu"
step tests.txt 40 "$build/tests/test_moe_grouped_gpu" --test-case='*LDS ring*'
step bench.txt 20 python3 bench/moe_grouped_floor.py --program "$build/tests/moe-grouped-floor" --out "$out/moe_grouped_floor_h200.json"
step bench.txt 75 python3 bench/moe_block.py --out "$out/moe_h200.json" --grouped-floor "$out/moe_grouped_floor_h200.json" \
  --peer-max-tokens 64 --compile-tokens ""
step bench.txt 35 python3 bench/moe_grouped.py --netra-bench "$build/tests/netra-bench-moe-grouped" --out "$out/moe_h200.json" \
  --compile-tokens "" --time-budget 5
step bench.txt 25 python3 bench/moe_routing.py --netra-bench "$build/tests/netra-bench-moe-routing" --out "$out/moe_h200.json"
grep -h "rc=\|test cases\|assertions\|met\|MISSED" "$out/tests.txt" "$out/bench.txt" | tail -n 40
