#!/usr/bin/env bash
# One H200 session for the integrated step (issue 30), every part time-limited (about 300 s in all),
# logs and JSON to $OUT, in order of importance:
#   0. where carried, the MoE block's GPU tests under the library's dispatch (test_moe_block_gpu's
#      grouped cases 17..256 and graph buckets, test_moe_grouped_dispatch_gpu);
#   1. the step's GPU tests (tests/python/test_step.py: the teacher-forced oracle of every op within
#      its bound, the checks failing past their bounds, decode / verify / commit, eager == graph,
#      the dense FP8 / BF16 paths);
#   2. the dense path's measured choice per group and row count (the BF16 forms of
#      plan.BF16_FORMS: cuBLAS's call, backend and split-K permission, the Triton GEMV at M = 1;
#      block-scaled FP8 with the fused quantization: $OUT/dense_table.json, one process of its own);
#   3. three fresh processes timing the headline buckets on that table;
#   4. bench/step.py at 40 layers on that table, its clock what the deadline leaves: every decode
#      and verify bucket (each with the teacher-forced oracle on its first 4 layers), the all-layer teacher-forced oracle at decode 16 / 64 and
#      verify 4, per-family profiles (device and critical-path time) at decode 1 / 64 and verify
#      64, each family's ops replayed alone beside the step's profile at decode 64 / 1, the replay
#      invariants, the B = 64 toggles;
#      it rewrites $OUT/step_h200.json and $OUT/step-coverage.md after every part;
#   5. the fresh processes' medians merged into its results (median of medians);
#   6. the argmax GPU test (tests/gpu/test_argmax_gpu.cpp, rows up to the 768-row verify instance)
#      with what the deadline leaves.
# Carried (built from an export of one commit: cmake --build <dir> --target netra_runtime
# test_argmax_gpu [test_moe_block_gpu test_moe_grouped_dispatch_gpu]; code objects embedded in the
# library): .carry-step/libnetra.so, .carry-step/revision (the commit it was built at: the device
# copy's git metadata is stale, so the results' environment.git_revision comes from this file), the
# test binaries (.carry-step/test_*_gpu) and .carry-step/code_objects/ (their sm90a cubins: argmax,
# moe; the binaries read them from the build folder named in .carry-step/code_objects_at, linked
# here to the carried folder)
# usage: OUT=<dir> bench/device/step_session.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/step_session}
mkdir -p "$OUT"
status=0
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
export NETRA_LIBRARY="$PWD/.carry-step/libnetra.so" PYTHONPATH="$PWD/python${PYTHONPATH:+:$PYTHONPATH}"
export NETRA_CACHE_DIR=${NETRA_CACHE_DIR:-/tmp/netra-cache} LD_LIBRARY_PATH="$PWD/.carry-step${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
[ -f .carry-step/revision ] && export NETRA_GIT_REVISION="$(cat .carry-step/revision)"

DEADLINE=${STEP_DEADLINE:-290}  # seconds for every step together: the logs are gathered after them, inside the call's limit
step() {  # step <name> <seconds> <command...>: runs it under timeout (cut to what the deadline leaves), log in $OUT/<name>.log
  local name=$1 limit=$2
  shift 2
  local left=$((DEADLINE - SECONDS))
  if [ "$left" -lt 12 ]; then
    echo "== $name skipped: ${left}s left of the session's ${DEADLINE}s"
    printf '{"step": "%s", "rc": null, "skipped": "deadline"}\n' "$name" >>"$OUT/steps.jsonl"
    status=1
    return
  fi
  [ "$limit" -gt $((left - 5)) ] && limit=$((left - 5))
  echo "== $name (limit ${limit}s): $*"
  local t0=$SECONDS
  timeout --kill-after=5 "$limit" "$@" >"$OUT/$name.log" 2>&1
  local rc=$?
  echo "   rc=$rc after $((SECONDS - t0)) s"
  tail -n 30 "$OUT/$name.log"
  [ $rc -eq 0 ] || status=1
  printf '{"step": "%s", "rc": %d, "seconds": %d}\n' "$name" "$rc" "$((SECONDS - t0))" >>"$OUT/steps.jsonl"
}

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv >"$OUT/gpu.txt" 2>&1 || true
if [ -d .carry-step/code_objects ]; then
  # the test binaries read their cubins from the build folder they were built in
  # (.carry-step/code_objects_at, relative to the tree or absolute; default build-step/code_objects):
  # link only where no real folder is (a build machine's own build keeps its code objects)
  at=$(cat .carry-step/code_objects_at 2>/dev/null || echo build-step/code_objects)
  mkdir -p "$(dirname "$at")"
  { [ ! -e "$at" ] || [ -L "$at" ]; } && ln -sfn "$PWD/.carry-step/code_objects" "$at"
fi
[ -x .carry-step/test_moe_block_gpu ] && step moe_block_gpu 35 .carry-step/test_moe_block_gpu --test-case='*24 and 32*,*17..256*,*graph buckets*'
[ -x .carry-step/test_moe_grouped_dispatch_gpu ] && step moe_grouped_dispatch_gpu 12 .carry-step/test_moe_grouped_dispatch_gpu
step step_pytest 70 python3 -m pytest -q -rs -s -p no:cacheprovider tests/python/test_step.py
step dense_tune $((${STEP_DENSE_SECONDS:-40} + 15)) python3 bench/step.py --tune-dense-only --dense-table "$OUT/dense_table.json" --dense-seconds ${STEP_DENSE_SECONDS:-40}
fresh=()  # the headline's fresh processes before the bench: the bench's own clock takes what is left
for i in 0 1 2; do
  step "fresh_$i" 26 python3 bench/step.py --headline-child --layers 40 --kv-len 8192 --reps 20 --seed $((100 + i)) \
    --dense-table "$OUT/dense_table.json" --dense-seconds 8
  fresh+=("$OUT/fresh_$i.log")
done
bench_s=$((DEADLINE - SECONDS - 22))  # its start-up (~8 s) and the merge after it (10 s) inside the deadline
cap=${STEP_BENCH_CAP:-118}
[ "$bench_s" -gt "$cap" ] && bench_s=$cap
step step_bench $((bench_s + 10)) python3 bench/step.py --layers 40 --kv-len 8192 --reps 10 --hash-replays 1000 \
  --seconds "$bench_s" --reserve 6 --dense-table "$OUT/dense_table.json" --dense-seconds 15 --out-dir "$OUT" ${STEP_BENCH_ARGS:-}  # e.g. --forced '' when the call is short
[ -f "$OUT/step_h200.json" ] && step merge_fresh 10 python3 bench/step.py --merge-fresh "$(IFS=,; echo "${fresh[*]}")" --out-dir "$OUT"
[ -x .carry-step/test_argmax_gpu ] && step argmax_gpu 40 .carry-step/test_argmax_gpu
# at most 8 files come back from $OUT: every log into one (step_h200.json, step-coverage.md and
# dense_table.json stay beside it)
for f in "$OUT"/gpu.txt "$OUT"/steps.jsonl "$OUT"/*.log; do
  [ -f "$f" ] && { echo "##### $(basename "$f")"; cat "$f"; rm -f "$f"; }
done >"$OUT/session_logs.txt"
exit $status
