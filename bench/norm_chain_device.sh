#!/usr/bin/env bash
# bench/norm_chain_device.sh [gated|prefill] — one short H200 call for the Chain candidates of
# contracts::norm. gated (the default): the gated decode's (catalog::norm_gated_chain); prefill:
# the rms / add_rms FP8 forms with Chain bit 32 (catalog::norm_quarter_groups). Beside each other,
# untimed: the GPU test of those instances only (NETRA_NORM_GPU_GATED_DECODE=1, or
# NETRA_NORM_GPU_FP8_RMS=1: the served forms and every candidate, bitwise against the oracle, every
# token count the test takes, padded strides), compute-sanitizer memcheck of the same and (gated)
# the torch peers' compile warm-up for the gated decode shapes. Then netra-bench-norm --gated-chain
# --dump (the served forms as records at 1, 16 and 64 tokens, every candidate, the served forms
# again; graph-replayed, one process, each line checked bitwise on its timed data) and bench/norm.py
# over those lines (the six gated decode records with their torch peers, each peer checked against
# netra's dumped outputs; the candidates as their alternatives), or netra-bench-norm
# --prefill-chain (diagnostic lines only: the served forms, the candidates, the served forms
# again); and the SASS of every cubin of the mode (one tar; per cubin the instruction count and the
# division's, reciprocal's, shuffle's and branch's opcodes in the log). Binaries and cubins come in
# .carry-norm/ (objects/ linked where the binaries look: build-norm/code_objects; revision: the
# commit they were built at, the results' environment.git_revision); six files (prefill: five) go to $OUT.
# Step limits: NORM_CHAIN_TEST_S (30), NORM_CHAIN_MEMCHECK_S (45), NORM_CHAIN_WARM_S (40), all
# three beside each other; NORM_CHAIN_DRIVER_S (60), NORM_CHAIN_BENCH_S (30).
set -uo pipefail
cd "$(dirname "$0")/.."
carry=.carry-norm
out=${OUT:-/tmp/norm-chain-out}
mkdir -p "$out" build-norm /tmp/norm-dump
[ -e build-norm/code_objects ] || ln -sfn "$PWD/$carry/objects" build-norm/code_objects
[ -n "${NETRA_GIT_REVISION:-}" ] || [ ! -f "$carry/revision" ] || export NETRA_GIT_REVISION="$(cat "$carry/revision")"
export LD_LIBRARY_PATH="$PWD/$carry${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" PYTHONUNBUFFERED=1
log="$out/log.txt"
exec > >(tee -a "$log") 2>&1
echo "revision ${NETRA_GIT_REVISION:-unknown}"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
mode=${1:-gated}
case "$mode" in
  gated) filter=NETRA_NORM_GPU_GATED_DECODE cubins="norm-sm90a-2-0-?-64-1-*.cubin" ;;
  prefill) filter=NETRA_NORM_GPU_FP8_RMS cubins="norm-sm90a-[01]-0-1-*.cubin" ;;
  *) echo "usage: bench/norm_chain_device.sh [gated|prefill]" >&2; exit 2 ;;
esac
env "$filter=1" NETRA_NORM_GPU_QUICK=1 timeout "${NORM_CHAIN_MEMCHECK_S:-45}" compute-sanitizer --tool memcheck \
  --error-exitcode 9 "$carry/test_norm_gpu" > "$out/memcheck.txt" 2>&1 &
memcheck=$!
warm=""
if [ "$mode" = gated ]; then
  timeout "${NORM_CHAIN_WARM_S:-40}" python3 bench/norm.py --warm-peers --warm-kinds gated --warm-rows 1,16,64 > /tmp/norm-chain-warm.txt 2>&1 &
  warm=$!
fi
env "$filter=1" timeout "${NORM_CHAIN_TEST_S:-30}" "$carry/test_norm_gpu" > "$out/gpu_test.txt" 2>&1
echo "== [${SECONDS} s] gpu test exit $?"
wait "$memcheck"; echo "== [${SECONDS} s] memcheck exit $?"
if [ -n "$warm" ]; then wait "$warm"; echo "== [${SECONDS} s] warm-up exit $?"; tail -n 2 /tmp/norm-chain-warm.txt; fi
grep -hE "ERROR SUMMARY|test cases|calls checked" "$out/gpu_test.txt" "$out/memcheck.txt"
timeout "${NORM_CHAIN_DRIVER_S:-60}" "$carry/netra-bench-norm" "--$mode-chain" --dump /tmp/norm-dump > "$out/chain_driver.jsonl"
echo "== [${SECONDS} s] driver exit $? ($(wc -l < "$out/chain_driver.jsonl") lines)"
if [ "$mode" = gated ]; then
  timeout "${NORM_CHAIN_BENCH_S:-30}" python3 bench/norm.py --driver-output "$out/chain_driver.jsonl" --dump /tmp/norm-dump \
    --out "$out/norm_gated_decode_h200.json"
  echo "== [${SECONDS} s] bench exit $?"
fi
if command -v cuobjdump > /dev/null; then
  sass=/tmp/norm-chain-sass
  mkdir -p "$sass"
  for c in "$carry"/objects/$cubins; do
    s="$sass/$(basename "$c" .cubin).sass"
    cuobjdump -sass "$c" > "$s" 2>&1
    echo "== SASS $(basename "$c" .cubin): $(grep -cE '^\s+/\*[0-9a-f]{4}\*/' "$s") instructions," \
      "$(grep -oE 'MUFU\.[A-Z0-9]+|FCHK|BSSY|BREAK|CALL\.[A-Z.]+|SHFL\.[A-Z]+|REDUX\.[A-Z]+|BRA' "$s" | sort | uniq -c | tr -s ' \n' ' ')"
  done
  tar -czf "$out/sass.tar.gz" -C "$sass" .
else
  echo "!! no cuobjdump: no SASS"
fi
echo "== [${SECONDS} s] done"
