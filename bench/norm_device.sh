#!/usr/bin/env bash
# bench/norm_device.sh — what the normalization family needs the H200 for, in one command: the
# GPU test of every sm90a norm instance (test_norm_gpu) and, beside it, compute-sanitizer memcheck
# of the norm kernels (the same test, NETRA_NORM_GPU_QUICK=1: calls of <= 100 tokens); then the
# byte-moving floor (bench/norm_floor.py over norm-floor) and bench/norm.py (netra's dispatched and
# alternative mappings, each with its floor, and the torch peers). Built binaries come in
# .carry-norm/ (test_norm_gpu, netra-bench-norm, norm-floor, and the norm cubins under objects/,
# linked where the binaries look for them: build-norm/code_objects); logs and JSON go to $OUT
# (default /tmp/norm-out). Step limits: NORM_TEST_S, NORM_FLOOR_S, NORM_DRIVER_S, NORM_BENCH_S
# (the defaults fit one 100 s device call).
set -uo pipefail
cd "$(dirname "$0")/.."
carry=.carry-norm
out=${OUT:-/tmp/norm-out}
mkdir -p "$out" build-norm
export PYTHONUNBUFFERED=1
[ -e build-norm/code_objects ] || ln -sfn "$PWD/$carry/objects" build-norm/code_objects  # NETRA_CODE_OBJECT_DIR
status=0
step() { echo "== $*"; "$@" || { echo "!! FAILED ($?): $*"; status=1; }; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
# The test, the memcheck and the peers' compile warm-up (bench/norm.py --warm-peers: torch's
# on-disk caches) run together; nothing is timed until all three end.
timeout "${NORM_TEST_S:-22}" python3 bench/norm.py --warm-peers > "$out/warm.txt" 2>&1 &
warm=$!
NETRA_NORM_GPU_QUICK=1 timeout "${NORM_TEST_S:-22}" compute-sanitizer --tool memcheck --error-exitcode 9 "$carry/test_norm_gpu" \
  > "$out/memcheck.txt" 2>&1 &
memcheck=$!
step timeout "${NORM_TEST_S:-22}" "$carry/test_norm_gpu" > "$out/gpu_tests.txt" 2>&1
tail -n 6 "$out/gpu_tests.txt"
wait "$memcheck"; rc=$?
echo "== memcheck exit $rc"; [ "$rc" = 0 ] || status=1
grep -E "ERROR SUMMARY|test cases|Device not supported" "$out/memcheck.txt" | tail -n 4
wait "$warm"; echo "== warm-up exit $? ($(tail -n 1 "$out/warm.txt" | cut -c1-100))"
# The floor program and the driver write their JSON lines to $out as they go (a step cut short by
# its limit keeps what it measured); the scripts then record them.
step timeout "${NORM_FLOOR_S:-14}" "$carry/norm-floor" > "$out/norm_floor.jsonl" 2> "$out/floor_err.txt"
grep -E "gated_rms_norm_fp8|move_again" "$out/norm_floor.jsonl" | grep -E '"tokens": (16|64)' | cut -c1-150 | head -n 30
mkdir -p /tmp/norm-dump
step timeout "${NORM_DRIVER_S:-20}" "$carry/netra-bench-norm" --dump /tmp/norm-dump > "$out/norm_driver.jsonl" 2> "$out/driver_err.txt"
grep -E '"tokens": (16|64)' "$out/norm_driver.jsonl" | grep -E "gated_rms_norm" | cut -c1-230
step timeout "${NORM_BENCH_S:-34}" python3 bench/norm.py --driver-output "$out/norm_driver.jsonl" --dump /tmp/norm-dump --out "$out/norm_h200.json" \
  --floor-lines "$out/norm_floor.jsonl" > "$out/bench.txt" 2>&1
cut -c1-160 "$out/bench.txt" | tail -n 12
# Last (the device call's limit may cut it; the lines above are the data): the floor file.
step timeout 8 python3 bench/norm_floor.py --lines "$out/norm_floor.jsonl" --out "$out/norm_floor_h200.json" > "$out/floor.txt" 2>&1
exit $status
