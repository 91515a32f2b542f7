#!/usr/bin/env bash
# bench/attention_check_device.sh — a GQA8 kernel change checked and timed on the H200 in one command
# (issue 26's fix): bench/attention_profile.py --mode compare (the served calls on $BASELINE's cubins and
# on $CARRY's, bits compared, the new output against the bound, graph-replayed rounds in alternating
# order), the GPU tests that cover the changed kernels (every catalogued mapping bitwise at several slice
# counts and stage two past one batch of 32 slices; batches 65..128; what dispatch serves; masked
# indices; BlockSplit), compute-sanitizer memcheck and racecheck, and ncu's warp states of the new served
# B = 64 stage one. Built binaries come in $CARRY (test_attention_gqa8_gpu, code_objects/ with every sm90a
# attention_gqa8 cubin, base/ with the baseline's); logs and JSON go to $OUT. Each step is time-limited.
set -uo pipefail
cd "$(dirname "$0")/.."
carry=${CARRY:-.carry-attention}
build=${BUILD:-build-attention}
out=${OUT:-/tmp/attention-check-out}
. bench/attention_device_env.sh
# the test binary names its code objects by the build machine's absolute path
[ "$PWD" = /work/main ] || { mkdir -p /work/main/$build && ln -sfn "$PWD/$carry/code_objects" /work/main/$build/code_objects; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
step timeout ${COMPARE_S:-35} python3 bench/attention_profile.py --mode compare --objects "$carry/code_objects" --baseline "${BASELINE:-$carry/base}" \
  --budget-s $(( ${COMPARE_S:-35} - 8 )) --out "$out/attention_check_compare_h200.json" > "$out/compare.txt" 2>&1
cut -c1-330 "$out/compare.txt" | grep -v "^\s*$" | tail -n 12
tests="$carry/test_attention_gqa8_gpu"
step timeout ${BITWISE_S:-25} "$tests" -tc="bitwise equal*" > "$out/gpu_tests_bitwise.txt" 2>&1
grep -cE " 0 of [0-9]+ outputs differ" "$out/gpu_tests_bitwise.txt"; grep -E "differ" "$out/gpu_tests_bitwise.txt" | grep -vE " 0 of " | head -5
tail -n 3 "$out/gpu_tests_bitwise.txt"
step timeout ${REST_S:-20} "$tests" -tc="decode at batches 65..128*,what dispatch serves*,an index outside the pool*,BlockSplit small*,a refused call*" \
  > "$out/gpu_tests_rest.txt" 2>&1
grep -cE " 0 of [0-9]+ outputs differ|beyond bound 0" "$out/gpu_tests_rest.txt"; tail -n 3 "$out/gpu_tests_rest.txt"
step timeout ${MEMCHECK_S:-20} compute-sanitizer --tool memcheck --error-exitcode 9 "$tests" \
  -tc="an index outside the pool is masked*,what dispatch serves*" > "$out/memcheck.txt" 2>&1
tail -n 2 "$out/memcheck.txt"
step timeout ${RACECHECK_S:-10} compute-sanitizer --tool racecheck --error-exitcode 9 "$tests" -tc="an index outside the pool is masked*" > "$out/racecheck.txt" 2>&1
tail -n 2 "$out/racecheck.txt"
if [ "${NCU_S:-14}" -gt 0 ]; then  # the new served B = 64 stage one (the profile driver's first case)
  step timeout ${NCU_S:-14} ncu --clock-control none --cache-control none -k regex:netra -c 1 --section WarpStateStats --section SchedulerStats \
    --section SpeedOfLight --section Occupancy --section LaunchStats --page raw --csv python3 bench/attention_profile.py --objects "$carry/code_objects" \
    --mode ncu --cases 1 > "$out/ncu_b64_raw.csv" 2>&1
  python3 bench/attention_profile_ncu.py --raw "$out/ncu_b64_raw.csv" --out "$out/attention_check_ncu_b64_h200.json" 2>&1 | cut -c1-400
fi
exit $status
