#!/usr/bin/env bash
# bench/attention_device.sh — everything GQA8 attention needs the H200 for, in one command: the GPU
# tests (every catalogued sm90a mapping; bitwise, bound, refusals), compute-sanitizer memcheck of
# the masked and refused calls, the floors (bench/attention_floor.py over attention-read-floor, which
# first checks the device E4M3 widening on all byte pairs) and bench/attention.py (decode mappings
# compared, then decode B in {1, 8, 64, 128} and verify with every peer through
# bench/common.checked_peer). Built binaries come in $CARRY (default .carry-decode/:
# test_attention_gqa8_gpu, attention-read-floor and the sm90a attention cubins under code_objects/);
# logs and the results JSON go to $OUT (default /tmp/attention-out); NETRA_GIT_REVISION names the
# commit that was built (the device copy's git metadata can be stale). Each step is time-limited;
# the whole stays under 215 s.
set -uo pipefail
cd "$(dirname "$0")/.."
carry=${CARRY:-.carry-decode}
build=${BUILD:-build-decode}
out=${OUT:-/tmp/attention-out}
mkdir -p "$out" "$build"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
ln -sfn "$PWD/$carry/code_objects" "$build/code_objects"  # the tests' NETRA_CODE_OBJECT_DIR
status=0
step() { echo "== $*"; "$@" || { echo "!! FAILED ($?): $*"; status=1; }; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
step timeout 90 "$carry/test_attention_gqa8_gpu" > "$out/gpu_tests.txt" 2>&1
tail -n 6 "$out/gpu_tests.txt"
grep -E "MESSAGE|bitwise|outputs" "$out/gpu_tests.txt" | sed 's/.*MESSAGE: //' | grep -vE "differ from netra's order$" | head -12
grep -cE " 0 of [0-9]+ outputs differ" "$out/gpu_tests.txt"
step timeout 25 compute-sanitizer --tool memcheck --error-exitcode 9 "$carry/test_attention_gqa8_gpu" \
  -tc="an index outside the pool is masked*,a refused call*" > "$out/memcheck.txt" 2>&1
tail -n 2 "$out/memcheck.txt"
step timeout 40 python3 bench/attention_floor.py --program "$carry/attention-read-floor" --out "$out/attention_floor_h200.json" > "$out/floor.txt" 2>&1
cut -c1-220 "$out/floor.txt"
step timeout 60 python3 bench/attention.py --budget-s 45 --objects "$carry/code_objects" --floors "$out/attention_floor_h200.json" \
  --out "$out/attention_h200.json" > "$out/bench.txt" 2>&1
cut -c1-330 "$out/bench.txt" | tail -n 30
exit $status
