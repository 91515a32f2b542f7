#!/bin/bash
# bench/gdn_device.sh — issue 27's device call: the gdn GPU tests (kernels and the verify/commit
# protocol), the benchmark driver, compute-sanitizer memcheck of the short GPU tests, then the
# torch peers (bench/gdn.py over the driver's records), each under its own time limit; logs and
# results under $OUT.
#   carry: build-gdn/tests/test_gdn_gpu build-gdn/tests/test_gdn_c_abi_gpu build-gdn/tests/netra-bench-gdn
#          build-gdn/code_objects build-gdn/libnetra.so
#   usage: OUT=... bash bench/gdn_device.sh [tests-s driver-s memcheck-s peers-s compile-peers]
set -u
B=${BUILD:-build-gdn}
T1=${1:-130} T2=${2:-50} T3=${3:-40} T4=${4:-70} CP=${5:-1}
export PYTHONUNBUFFERED=1
nvidia-smi -L > "$OUT/gpu.txt" 2>&1
timeout "$T1" "$B/tests/test_gdn_gpu" --duration=true > "$OUT/gdn_gpu_tests.txt" 2>&1
echo "rc=$?" >> "$OUT/gdn_gpu_tests.txt"
timeout 60 "$B/tests/test_gdn_c_abi_gpu" > "$OUT/gdn_c_abi_tests.txt" 2>&1
echo "rc=$?" >> "$OUT/gdn_c_abi_tests.txt"
NETRA_LIBRARY="$B/libnetra.so" timeout 90 python3 -m pytest -q -rs tests/python/test_gdn.py >> "$OUT/gdn_c_abi_tests.txt" 2>&1
echo "python rc=$?" >> "$OUT/gdn_c_abi_tests.txt"
mkdir -p /tmp/gdn-dump
timeout "$T2" "$B/tests/netra-bench-gdn" --dump /tmp/gdn-dump > "$OUT/gdn_bench.jsonl" 2> "$OUT/gdn_bench_driver_err.txt"
echo "rc=$?" >> "$OUT/gdn_bench_driver_err.txt"
timeout "$T3" compute-sanitizer --tool memcheck --error-exitcode 9 "$B/tests/test_gdn_gpu" \
  -tc="conv*,precompute*,K0*,M16*,refused*,protocol smoke*" > "$OUT/gdn_memcheck.txt" 2>&1
echo "rc=$?" >> "$OUT/gdn_memcheck.txt"
timeout "$T4" python3 bench/gdn.py --netra-bench "$B/tests/netra-bench-gdn" --records "$OUT/gdn_bench.jsonl" --dump /tmp/gdn-dump \
  --out "$OUT/gdn_h200.json" --compile-peers "$CP" > "$OUT/gdn_bench_log.txt" 2>&1
echo "rc=$?" >> "$OUT/gdn_bench_log.txt"
for f in gdn_gpu_tests.txt gdn_c_abi_tests.txt gdn_bench_driver_err.txt gdn_memcheck.txt gdn_bench_log.txt; do echo "== $f"; tail -n 4 "$OUT/$f"; done
