#!/usr/bin/env bash
# bench/norm_device.sh — what the normalization family needs the H200 for, in one command: the
# GPU test of every sm90a norm instance (test_norm_gpu) and, beside it, compute-sanitizer memcheck
# of the norm kernels (the same test, NETRA_NORM_GPU_QUICK=1: calls of <= 100 tokens); then the
# byte-moving floor (bench/norm_floor.py over norm-floor) and bench/norm.py (netra's dispatched and
# alternative mappings, each with its floor, and the torch peers). Built binaries come in
# .carry-norm/ (test_norm_gpu, netra-bench-norm, norm-floor, and the norm cubins under objects/,
# linked where the binaries look for them: build-norm/code_objects); logs and JSON go to $OUT
# (default /tmp/norm-out). Step limits: NORM_TEST_S, NORM_WARM_S, NORM_FLOOR_S, NORM_DRIVER_S,
# NORM_BENCH_S (defaults 25 beside 35, then 8, 28, 45, and 12 for the floor file: at most about
# 128 s; at ebcdaa0 the whole script took 112 s, the peers' 30 records 35 s of their 40).
# NETRA_GIT_REVISION (the revision the carried binaries were built at) goes into the results'
# environment: the device copy's git metadata is stale.
set -uo pipefail
cd "$(dirname "$0")/.."
carry=.carry-norm
[ -n "${NETRA_GIT_REVISION:-}" ] || [ ! -f "$carry/revision" ] || export NETRA_GIT_REVISION="$(cat "$carry/revision")"
out=${OUT:-/tmp/norm-out}
mkdir -p "$out" build-norm
export PYTHONUNBUFFERED=1
[ -e build-norm/code_objects ] || ln -sfn "$PWD/$carry/objects" build-norm/code_objects  # NETRA_CODE_OBJECT_DIR
status=0
# At most five files in $out (the device call returns only a few): log.txt (every step's output),
# the floor program's and the driver's JSON lines (written as they go: a step cut short by its
# limit keeps what it measured) and the two results files.
log="$out/log.txt"
exec > >(tee -a "$log") 2>&1
step() { echo "== [${SECONDS} s] $*" >&2; "$@" || { echo "!! FAILED ($?): $*" >&2; status=1; }; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
# The test, the memcheck and the peers' compile warm-up (bench/norm.py --warm-peers: torch's
# on-disk caches; the first torch.compile of each peer takes seconds) run together; nothing is
# timed until all three end.
scratch=/tmp/norm-scratch
mkdir -p "$scratch" /tmp/norm-dump
timeout "${NORM_WARM_S:-35}" python3 bench/norm.py --warm-peers > "$scratch/warm.txt" 2>&1 &
warm=$!
NETRA_NORM_GPU_QUICK=1 timeout "${NORM_TEST_S:-25}" compute-sanitizer --tool memcheck --error-exitcode 9 "$carry/test_norm_gpu" \
  > "$scratch/memcheck.txt" 2>&1 &
memcheck=$!
step timeout "${NORM_TEST_S:-25}" "$carry/test_norm_gpu" > "$scratch/gpu_tests.txt" 2>&1
tail -n 6 "$scratch/gpu_tests.txt"
wait "$memcheck"; rc=$?
echo "== memcheck exit $rc"; [ "$rc" = 0 ] || status=1
grep -E "ERROR SUMMARY|test cases|calls checked|Device not supported" "$scratch/memcheck.txt" | tail -n 4
wait "$warm"; echo "== warm-up exit $?"; tail -n 3 "$scratch/warm.txt"
step timeout "${NORM_FLOOR_S:-8}" "$carry/norm-floor" > "$out/norm_floor.jsonl"
step timeout "${NORM_DRIVER_S:-28}" "$carry/netra-bench-norm" --dump /tmp/norm-dump > "$out/norm_driver.jsonl"
step timeout "${NORM_BENCH_S:-45}" python3 bench/norm.py --driver-output "$out/norm_driver.jsonl" --dump /tmp/norm-dump --out "$out/norm_h200.json" \
  --floor-lines "$out/norm_floor.jsonl"
step timeout 12 python3 bench/norm_floor.py --lines "$out/norm_floor.jsonl" --out "$out/norm_floor_h200.json"
echo "== [${SECONDS} s] done"
exit $status
