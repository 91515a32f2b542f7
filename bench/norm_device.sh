#!/usr/bin/env bash
# bench/norm_device.sh — what the normalization family needs the H200 for, in one command: the
# GPU test of every sm90a norm instance (test_norm_gpu) and, beside it, compute-sanitizer memcheck
# of the norm kernels (the same test, NETRA_NORM_GPU_QUICK=1: calls of <= 100 tokens); then the
# byte-moving floor (bench/norm_floor.py over norm-floor) and bench/norm.py (netra's dispatched and
# alternative mappings, each with its floor, and the torch peers); beside the GPU test, when
# libnetra.so is carried, the C ABI test (test_norm_c_abi_gpu) and the Python tests
# (tests/python/test_norm.py, the package from python/ of this tree). Built binaries come in
# .carry-norm/ (test_norm_gpu, test_norm_c_abi_gpu, libnetra.so, netra-bench-norm, norm-floor, and
# the norm cubins under objects/, linked where the binaries look for them: build-norm/code_objects);
# logs and JSON go to $OUT (default /tmp/norm-out). Step limits: NORM_TEST_S, NORM_WARM_S,
# NORM_FLOOR_S, NORM_DRIVER_S, NORM_BENCH_S (defaults 30 beside 38, then 8, 32, 42, and 5 for the
# floor file: at most about 125 s; at faf04fc, with the warm-up cut at 32 s, the peers compiled
# during the bench, which reached its 40 s limit after its last record: 118 s in all).
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
export NETRA_LIBRARY="$PWD/$carry/libnetra.so" NETRA_CACHE_DIR=/tmp/netra-cache PYTHONPATH="$PWD/python" \
  LD_LIBRARY_PATH="$PWD/$carry${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
status=0
# Six files in $out (the device call returns at most 8): log.txt (every step's output), the floor
# program's and the driver's JSON lines (written as they go: a step cut short by its limit keeps
# what it measured), the two results files and the gated FP8 decode instance's SASS.
log="$out/log.txt"
exec > >(tee -a "$log") 2>&1
step() { echo "== [${SECONDS} s] $*" >&2; "$@" || { echo "!! FAILED ($?): $*" >&2; status=1; }; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
# The test, the memcheck and the peers' compile warm-up (bench/norm.py --warm-peers: torch's
# on-disk caches; the first torch.compile of each peer takes seconds) run together; nothing is
# timed until all three end.
scratch=/tmp/norm-scratch
mkdir -p "$scratch" /tmp/norm-dump
timeout "${NORM_WARM_S:-38}" python3 bench/norm.py --warm-peers > "$scratch/warm.txt" 2>&1 &
warm=$!
abi=""
if [ -f "$carry/libnetra.so" ]; then  # the C ABI and Python tests (libnetra and its embedded norm objects)
  (timeout 20 "$carry/test_norm_c_abi_gpu" > "$scratch/c_abi.txt" 2>&1; echo "== C ABI test exit $?" >> "$scratch/c_abi.txt") &
  abi="$abi $!"
  (timeout "${NORM_WARM_S:-38}" python3 -m pytest -q -p no:cacheprovider tests/python/test_norm.py > "$scratch/python.txt" 2>&1
   echo "== Python tests exit $?" >> "$scratch/python.txt") &
  abi="$abi $!"
else
  echo "!! skipped: the C ABI and Python tests ($carry/libnetra.so not carried)"; status=1
fi
NETRA_NORM_GPU_QUICK=1 timeout "${NORM_TEST_S:-30}" compute-sanitizer --tool memcheck --error-exitcode 9 "$carry/test_norm_gpu" \
  > "$scratch/memcheck.txt" 2>&1 &
memcheck=$!
step timeout "${NORM_TEST_S:-30}" "$carry/test_norm_gpu" > "$scratch/gpu_tests.txt" 2>&1
tail -n 6 "$scratch/gpu_tests.txt"
wait "$memcheck"; rc=$?
echo "== memcheck exit $rc"; [ "$rc" = 0 ] || status=1
grep -E "ERROR SUMMARY|test cases|calls checked|Device not supported" "$scratch/memcheck.txt" | tail -n 4
wait "$warm"; echo "== warm-up exit $?"; tail -n 3 "$scratch/warm.txt"
for p in $abi; do wait "$p"; done
if [ -n "$abi" ]; then
  grep -E "test cases|assertions|ERROR|FAILED" "$scratch/c_abi.txt" | tail -n 6; tail -n 1 "$scratch/c_abi.txt"
  grep -E "passed|failed|skipped|Error" "$scratch/python.txt" | tail -n 6; tail -n 1 "$scratch/python.txt"
  grep -q "exit 0$" "$scratch/c_abi.txt" && grep -q "exit 0$" "$scratch/python.txt" || status=1
fi
step timeout "${NORM_FLOOR_S:-8}" "$carry/norm-floor" > "$out/norm_floor.jsonl"
step timeout "${NORM_DRIVER_S:-32}" "$carry/netra-bench-norm" --dump /tmp/norm-dump > "$out/norm_driver.jsonl"
step timeout "${NORM_BENCH_S:-42}" python3 bench/norm.py --driver-output "$out/norm_driver.jsonl" --dump /tmp/norm-dump --out "$out/norm_h200.json" \
  --floor-lines "$out/norm_floor.jsonl"
step timeout 5 python3 bench/norm_floor.py --lines "$out/norm_floor.jsonl" --out "$out/norm_floor_h200.json"
# The gated decode's machine code (the FP8 form in full; per gated instance the counts of the
# division's pieces: MUFU.RCP, FCHK, BSSY, CALL).
if command -v cuobjdump > /dev/null; then
  cuobjdump -sass "$carry/objects/norm-sm90a-2-0-1-64-1-2-0.cubin" > "$out/gated_fp8_decode_sass.txt" 2>&1
  for c in "$carry"/objects/norm-sm90a-2-*.cubin; do
    echo "== SASS $(basename "$c" .cubin): $(cuobjdump -sass "$c" | grep -cE '^\s+/\*[0-9a-f]{4}\*/') instructions," \
      "$(cuobjdump -sass "$c" | grep -oE 'MUFU\.[A-Z0-9]+|FCHK|BSSY|CALL\.[A-Z.]+' | sort | uniq -c | tr -s ' \n' ' ')"
  done
fi
echo "== [${SECONDS} s] done"
exit $status
