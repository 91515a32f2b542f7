#!/bin/bash
# bench/gdn_device.sh — issue 27's device call: the gdn GPU tests (kernels and the verify/commit
# protocol), the benchmark (bench/gdn.py over netra-bench-gdn) and compute-sanitizer memcheck of
# the short GPU tests, each under its own time limit, logs and results under $OUT.
#   carry: build-gdn/tests/test_gdn_gpu build-gdn/tests/netra-bench-gdn build-gdn/code_objects
#   usage: OUT=... bash bench/gdn_device.sh [tests-seconds bench-seconds memcheck-seconds compile-peers]
set -u
B=${BUILD:-build-gdn}
T1=${1:-120} T2=${2:-110} T3=${3:-50} CP=${4:-1}
export PYTHONUNBUFFERED=1
nvidia-smi -L > "$OUT/gpu.txt" 2>&1
timeout "$T1" "$B/tests/test_gdn_gpu" --duration=true > "$OUT/gdn_gpu_tests.txt" 2>&1
echo "rc=$?" >> "$OUT/gdn_gpu_tests.txt"
timeout "$T2" python3 bench/gdn.py --netra-bench "$B/tests/netra-bench-gdn" --out "$OUT/gdn_h200.json" --compile-peers "$CP" > "$OUT/gdn_bench_log.txt" 2>&1
echo "rc=$?" >> "$OUT/gdn_bench_log.txt"
timeout "$T3" compute-sanitizer --tool memcheck --error-exitcode 9 "$B/tests/test_gdn_gpu" \
  -tc="conv*,precompute*,K0*,M16*,refused*,protocol smoke*" > "$OUT/gdn_memcheck.txt" 2>&1
echo "rc=$?" >> "$OUT/gdn_memcheck.txt"
tail -3 "$OUT/gdn_gpu_tests.txt" "$OUT/gdn_bench_log.txt" "$OUT/gdn_memcheck.txt"
