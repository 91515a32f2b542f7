#!/usr/bin/env bash
# One H200 session for the decode step (issue 30): the GDN one-token decode and the widened GQA8
# decode on the GPU, the step's pytest, and bench/step.py with the per-layer divergence trace.
# Every step is time-limited (about 195 s in all); logs and JSON go to $OUT.
#   carried (built here in build-step, slimmed into .carry-decode1/ by the copy command in the
#   report): .carry-decode1/libnetra.so, .carry-decode1/code_objects (the sm90a cubins),
#   .carry-decode1/test_gdn_decode_gpu, .carry-decode1/test_attention_gqa8_gpu
# usage: OUT=<dir> bench/device/step_session.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/step_session}
mkdir -p "$OUT"
carry=.carry-decode1
status=0
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
export NETRA_LIBRARY="$PWD/$carry/libnetra.so" PYTHONPATH="$PWD/python${PYTHONPATH:+:$PYTHONPATH}"
export NETRA_CACHE_DIR=${NETRA_CACHE_DIR:-/tmp/netra-cache}
# The test binaries read cubins from the build directory they were built in (build-step/code_objects).
mkdir -p build-step
[ -e build-step/code_objects ] || ln -s "$PWD/$carry/code_objects" build-step/code_objects

step() {  # step <name> <seconds> <command...>: runs it under timeout, log in $OUT/<name>.log
  local name=$1 limit=$2
  shift 2
  echo "== $name (limit ${limit}s): $*"
  local t0=$SECONDS
  timeout --kill-after=5 "$limit" "$@" >"$OUT/$name.log" 2>&1
  local rc=$?
  echo "   rc=$rc after $((SECONDS - t0)) s"
  tail -n 25 "$OUT/$name.log"
  [ $rc -eq 0 ] || status=1
  printf '{"step": "%s", "rc": %d, "seconds": %d}\n' "$name" "$rc" "$((SECONDS - t0))" >>"$OUT/steps.jsonl"
}

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv >"$OUT/gpu.txt" 2>&1 || true
git rev-parse HEAD >"$OUT/revision.txt" 2>/dev/null || true
step gdn_decode_gpu 55 "$carry/test_gdn_decode_gpu"
step attention_decode_wide_gpu 20 "$carry/test_attention_gqa8_gpu" --test-case="decode at batches 65..128*"
step step_pytest 45 python3 -m pytest -q -rs -p no:cacheprovider tests/python/test_step.py \
  "tests/python/test_torch_ops.py::test_attention_past_64_served_and_beyond_128_falls_back_inside_a_graph"
step step_bench 75 python3 bench/step.py --layers 40 --kv-len 8192 --buckets 1,64,80,128 --verify-buckets 1 --toggle-buckets "" \
  --hash-replays 20 --reps 10 --divergence-bucket 16 --seconds 62 --reserve 8 --out-dir "$OUT"
exit $status
