#!/usr/bin/env bash
# bench/norm_device.sh — what the normalization family needs the H200 for, in one command: the
# GPU test of every sm90a norm instance (test_norm_gpu), the byte-moving floor (bench/norm_floor.py
# over norm-floor) and bench/norm.py (netra's dispatched and alternative mappings, each with its
# floor, and the torch peers). Built binaries come in .carry-norm/ (test_norm_gpu, netra-bench-norm,
# norm-floor, and the norm cubins under objects/, linked where the binaries look for them:
# build-norm/code_objects); logs and JSON go to $OUT (default /tmp/norm-out).
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
step timeout "${NORM_TEST_S:-40}" "$carry/test_norm_gpu" > "$out/gpu_tests.txt" 2>&1
tail -n 8 "$out/gpu_tests.txt"
step timeout "${NORM_FLOOR_S:-25}" python3 bench/norm_floor.py --program "$carry/norm-floor" --out "$out/norm_floor_h200.json" > "$out/floor.txt" 2>&1
cut -c1-160 "$out/floor.txt" | tail -n 100
step timeout "${NORM_BENCH_S:-110}" python3 bench/norm.py --netra-bench "$carry/netra-bench-norm" --out "$out/norm_h200.json" \
  --floor "$out/norm_floor_h200.json" --driver-lines "$out/norm_driver.jsonl" > "$out/bench.txt" 2>&1
cut -c1-200 "$out/bench.txt" | tail -n 40
exit $status
