#!/usr/bin/env bash
# One device call for the grouped experts (issue 29 §3, §4): the GPU test, the benchmark, then
# compute-sanitizer memcheck on the cases that cover every configuration's indexing (the refusals,
# one expert taking every route at M = 64 and at M = 768 through the split-K pair).
# usage: bench/moe_grouped_device.sh BUILD OUT
set -u
cd "$(dirname "$0")/.."
build=$1
out=$2
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1 PYTHONPATH="$PWD/python"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$out/gpu.txt" 2>&1
start=$(date +%s)
timeout 150 "$build/tests/test_moe_grouped_gpu" > "$out/gpu_test.txt" 2>&1; echo "rc=$? after $(( $(date +%s) - start )) s" >> "$out/gpu_test.txt"
timeout 100 python3 bench/moe_grouped.py --netra-bench "$build/tests/netra-bench-moe-grouped" --out "$out/moe_grouped_h200.json" \
  --time-budget 40 > "$out/bench.txt" 2>&1; echo "rc=$? after $(( $(date +%s) - start )) s" >> "$out/bench.txt"
left=$(( 290 - ($(date +%s) - start) ))
[ "$left" -gt 20 ] && timeout "$left" compute-sanitizer --tool memcheck --error-exitcode 9 "$build/tests/test_moe_grouped_gpu" \
  --test-case='*refused*,*one expert*' > "$out/memcheck.txt" 2>&1; echo "rc=$? after $(( $(date +%s) - start )) s" >> "$out/memcheck.txt"
for f in "$out"/*.txt; do tail -n 3 "$f"; done
