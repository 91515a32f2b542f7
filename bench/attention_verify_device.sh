#!/usr/bin/env bash
# bench/attention_verify_device.sh — the split verify's forms on the H200 in one command: the GPU
# tests of the verify forms (TESTS_FILTER, default "verify BlockSplit*": the served BlockSplit 2 and the unsplit 1 x 8, bitwise, bounded,
# masked, repeatable; the served verify bounded), bench/attention_verify.py (the served form and the
# BlockSplit forms at prefix 49152 and 8192 in one process, peers with the first form, every form's
# bits against the served form's), compute-sanitizer memcheck and racecheck of the small BlockSplit
# case (its LDS score exchange), then, with EXTEND=1, bench/attention_extend.py's headline shapes.
# Built binaries come in $CARRY (default .carry-verify/: test_attention_gqa8_gpu, code_objects/ with
# the sm90a verify (and extend) cubins, bench/ with the committed scripts); logs and results JSON go
# to $OUT; NETRA_GIT_REVISION names the commit that was built. Each step is time-limited.
set -uo pipefail
cd "$(dirname "$0")/.."
carry=${CARRY:-.carry-verify}
build=${BUILD:-build-verify}
out=${OUT:-/tmp/attention-verify-out}
. bench/attention_device_env.sh
scripts=$carry/bench  # the committed scripts (the device copy of the tree may hold others' edits)
[ -f "$scripts/attention_verify.py" ] || scripts=bench
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
step timeout ${TESTS_S:-45} "$carry/test_attention_gqa8_gpu" -tc="${TESTS_FILTER:-verify BlockSplit*}" > "$out/gpu_tests.txt" 2>&1
grep -E "bitwise|beyond bound" "$out/gpu_tests.txt" | cut -c1-200 | tail -n 30
tail -n 4 "$out/gpu_tests.txt"
step timeout ${BENCH_S:-70} python3 "$scripts/attention_verify.py" --budget-s $(( ${BENCH_S:-70} * 4 / 5 )) --objects "$carry/code_objects" \
  --floors bench/results/evidence/attention_floor_h200.json --out "$out/attention_verify_h200.json" > "$out/bench.txt" 2>&1
cut -c1-260 "$out/bench.txt" | tail -n 20
step timeout ${MEMCHECK_S:-15} compute-sanitizer --tool memcheck --error-exitcode 9 "$carry/test_attention_gqa8_gpu" \
  -tc="verify BlockSplit small*" > "$out/memcheck.txt" 2>&1
tail -n 2 "$out/memcheck.txt"
step timeout ${RACECHECK_S:-20} compute-sanitizer --tool racecheck --error-exitcode 9 "$carry/test_attention_gqa8_gpu" \
  -tc="verify BlockSplit small*" > "$out/racecheck.txt" 2>&1
tail -n 2 "$out/racecheck.txt"
if [ "${EXTEND:-0}" = 1 ]; then  # the GQA4 extend headline shapes on the served form (writes into a copy of the results file)
  cp bench/results/attention_h200.json "$out/attention_h200.json"
  step timeout $(( ${EXTEND_S:-35} + 20 )) python3 "$scripts/attention_extend.py" --budget-s ${EXTEND_S:-35} --objects "$carry/code_objects" \
    --out "$out/attention_h200.json" ${EXTEND_ARGS:-} > "$out/extend_bench.txt" 2>&1
  cut -c1-260 "$out/extend_bench.txt" | tail -n 12
fi
exit $status
