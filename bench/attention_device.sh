#!/usr/bin/env bash
# bench/attention_device.sh — everything GQA8 attention needs the H200 for, in one command: the GPU
# tests (every catalogued sm90a mapping; bitwise, bound, refusals), the floors of the verify grids
# (bench/attention_floor.py over attention-read-floor, which first checks the device E4M3 widening
# on all byte pairs), bench/attention.py (verify first with every peer through
# bench/common.checked_peer and stage one alone, the slice sweep, the decode mappings compared,
# then decode B in {1, 64, 8, 128, 16}; BENCH_S seconds), with NCU=1 ncu's view of the served
# verify's stage one, and compute-sanitizer memcheck (masked and refused calls) and racecheck.
# FLOORS=1 measures the floors again (else the committed evidence file names them). Built binaries come
# in $CARRY (default .carry-decode/: test_attention_gqa8_gpu, attention-read-floor and the sm90a
# attention cubins under code_objects/); logs and the results JSON go to $OUT (default
# /tmp/attention-out); NETRA_GIT_REVISION names the commit that was built (the device copy's git
# metadata can be stale). BASELINE=<dir of an earlier revision's cubins> (with BASELINE_REV) times the
# served B = 1 decode and verify against them in the same run; SERVED_ONLY=1 skips the slice sweep and
# the mapping comparison; BENCH=0 runs the tests and sanitizers only; SPLIT=1 runs, instead of the bench, the BlockSplit
# comparison (bench/attention.py --block-split: 2 x 0 against its blocks over 4 / 8 warps) and, with FLOORS=1, the decode B=1
# floors of those grids (FLOOR_ONLY: comma-separated prefixes of the floor grids' "<shape> <mapping>", default verify; SPLIT=1
# sets "decode B=1 L"). Each step is
# time-limited; the whole stays under 195 s.
set -uo pipefail
cd "$(dirname "$0")/.."
carry=${CARRY:-.carry-decode}
build=${BUILD:-build-decode}
out=${OUT:-/tmp/attention-out}
. bench/attention_device_env.sh
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
first="BlockSplit*,bitwise equal*,what dispatch serves*,split-sequence verification*,an index outside the pool*,the same input*,a refused call*"
step timeout ${TESTS_S:-60} "$carry/test_attention_gqa8_gpu" -tc="$first" > "$out/gpu_tests.txt" 2>&1
tail -n 4 "$out/gpu_tests.txt"
grep -cE " 0 of [0-9]+ outputs differ" "$out/gpu_tests.txt"
# The floors of netra's grids come from the committed evidence unless FLOORS=1 measures them again.
floors=bench/results/evidence/attention_floor_h200.json
if [ "${FLOORS:-0}" = 1 ]; then
  floor_only=${FLOOR_ONLY:-verify}
  [ "${SPLIT:-0}" = 1 ] && floor_only=${FLOOR_ONLY:-decode B=1 L}
  step timeout ${FLOOR_S:-15} env NETRA_FLOOR_ONLY="$floor_only" python3 bench/attention_floor.py --program "$carry/attention-read-floor" \
    --out "$out/attention_floor_h200.json" > "$out/floor.txt" 2>&1
  cut -c1-220 "$out/floor.txt"
  floors="$out/attention_floor_h200.json"
fi
extra=()
[ "${SERVED_ONLY:-0}" = 1 ] && extra+=(--served-only)
[ -n "${BASELINE:-}" ] && extra+=(--baseline-objects "$BASELINE" --baseline-revision "${BASELINE_REV:-}")
[ "${SPLIT:-0}" = 1 ] && extra+=(--block-split)
[ "${BENCH:-1}" = 0 ] || step timeout ${BENCH_S:-70} python3 bench/attention.py --budget-s $(( ${BENCH_S:-70} * 4 / 5 )) --objects "$carry/code_objects" --floors "$floors" \
  "${extra[@]}" --out "$out/attention_h200.json" > "$out/bench.txt" 2>&1
[ "${BENCH:-1}" = 0 ] || cut -c1-300 "$out/bench.txt" | tail -n 40
step timeout ${REST_S:-30} "$carry/test_attention_gqa8_gpu" -tce="$first" > "$out/gpu_tests_rest.txt" 2>&1
tail -n 4 "$out/gpu_tests_rest.txt"
if [ "${NCU:-0}" = 1 ]; then
  step timeout 22 ncu --clock-control none -k regex:stage_one -s 2 -c 1 --section SpeedOfLight --section WarpStateStats --section Occupancy \
    --section ComputeWorkloadAnalysis python3 bench/attention.py --objects "$carry/code_objects" --out /dev/null --profile-verify > "$out/ncu_verify.txt" 2>&1
  grep -E "Duration|Throughput|Warp Cycles|Stall|Achieved Occupancy|Issue Slots|Pipe" "$out/ncu_verify.txt" | head -30
fi
step timeout ${MEMCHECK_S:-14} compute-sanitizer --tool memcheck --error-exitcode 9 "$carry/test_attention_gqa8_gpu" \
  -tc="${MEMCHECK_CASES:-an index outside the pool is masked*,a refused call*}" > "$out/memcheck.txt" 2>&1
tail -n 2 "$out/memcheck.txt"
step timeout 12 compute-sanitizer --tool racecheck --error-exitcode 9 "$carry/test_attention_gqa8_gpu" \
  -tc="an index outside the pool is masked*" > "$out/racecheck.txt" 2>&1
tail -n 2 "$out/racecheck.txt"
# BlockSplit: its warps exchange each block's scores through LDS (one barrier a block, two buffers).
step timeout ${SPLIT_RACECHECK_S:-20} compute-sanitizer --tool racecheck --error-exitcode 9 "$carry/test_attention_gqa8_gpu" \
  -tc="BlockSplit small*" > "$out/racecheck_split.txt" 2>&1
tail -n 2 "$out/racecheck_split.txt"
exit $status
