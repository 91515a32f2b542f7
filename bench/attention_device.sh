#!/usr/bin/env bash
# bench/attention_device.sh — everything attention needs the H200 for, in one command: the GPU
# tests, compute-sanitizer memcheck and racecheck, and bench/attention.py. Built binaries come in
# .carry-attention/ (test_attention_gqa8_gpu and the attention cubins under code_objects/); logs
# and the results JSON go to $OUT (default /tmp/attention-out).
set -uo pipefail
cd "$(dirname "$0")/.."
carry=.carry-attention
out=${OUT:-/tmp/attention-out}
mkdir -p "$out" build-attention
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
ln -sfn "$PWD/$carry/code_objects" build-attention/code_objects  # the tests' NETRA_CODE_OBJECT_DIR
status=0
step() { echo "== $*"; "$@" || { echo "!! FAILED ($?): $*"; status=1; }; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
step timeout 70 "$carry/test_attention_gqa8_gpu" > "$out/gpu_tests.txt" 2>&1
tail -n 45 "$out/gpu_tests.txt"
grep -E "MESSAGE|bitwise|outputs" "$out/gpu_tests.txt" | sed 's/.*MESSAGE: //' | head -60
step timeout 45 compute-sanitizer --tool memcheck --error-exitcode 9 "$carry/test_attention_gqa8_gpu" \
  -tc="an index outside the pool is masked*,a refused call*" > "$out/memcheck.txt" 2>&1
tail -n 4 "$out/memcheck.txt"
step timeout 35 compute-sanitizer --tool racecheck --error-exitcode 9 "$carry/test_attention_gqa8_gpu" \
  -tc="the same input gives*" > "$out/racecheck.txt" 2>&1
tail -n 4 "$out/racecheck.txt"
step timeout 140 python3 bench/attention.py --budget-s 85 --objects "$carry/code_objects" --out "$out/attention_h200.json" > "$out/bench.txt" 2>&1
cat "$out/bench.txt" | cut -c1-400 | tail -n 40
exit $status
