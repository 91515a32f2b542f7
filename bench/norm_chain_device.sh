#!/usr/bin/env bash
# bench/norm_chain_device.sh — one short H200 call for the gated decode's Chain candidates
# (contracts::norm field Chain, catalog::norm_gated_chain): the GPU test of the gated decode
# instances only (NETRA_NORM_GPU_GATED_DECODE=1: the served Chain 0 forms and every candidate,
# bitwise against the oracle, tokens 1 .. 64, padded strides) with compute-sanitizer memcheck of
# the same beside it, then netra-bench-norm --gated-chain (served and candidates at 1, 16 and 64
# tokens, graph-replayed, one process, each line checked bitwise on its timed data), then the SASS
# of the four FP8 / BF16 decode forms. Binaries and cubins come in .carry-norm2/ (objects/ linked
# where the binaries look: build-norm/code_objects); logs, JSON lines and SASS go to $OUT.
set -uo pipefail
cd "$(dirname "$0")/.."
carry=.carry-norm2
out=${OUT:-/tmp/norm2-out}
mkdir -p "$out" build-norm
[ -e build-norm/code_objects ] || ln -sfn "$PWD/$carry/objects" build-norm/code_objects
export LD_LIBRARY_PATH="$PWD/$carry${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
echo "revision $(cat "$carry/revision" 2>/dev/null)" | tee "$out/log.txt"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv >> "$out/log.txt" 2>&1
NETRA_NORM_GPU_GATED_DECODE=1 NETRA_NORM_GPU_QUICK=1 timeout 24 compute-sanitizer --tool memcheck --error-exitcode 9 \
  "$carry/test_norm_gpu" > "$out/memcheck.txt" 2>&1 &
memcheck=$!
NETRA_NORM_GPU_GATED_DECODE=1 timeout 20 "$carry/test_norm_gpu" > "$out/gpu_test.txt" 2>&1
echo "== gpu test exit $?" >> "$out/log.txt"
wait "$memcheck"; echo "== memcheck exit $?" >> "$out/log.txt"
timeout 24 "$carry/netra-bench-norm" --gated-chain > "$out/chain_driver.jsonl" 2>> "$out/log.txt"
echo "== driver exit $?" >> "$out/log.txt"
if command -v cuobjdump > /dev/null; then
  for c in "$carry"/objects/norm-sm90a-2-0-?-64-1-2-0*.cubin; do
    cuobjdump -sass "$c" > "$out/sass-$(basename "$c" .cubin).txt" 2>&1
  done
fi
grep -hE "ERROR SUMMARY|test cases|calls checked" "$out/gpu_test.txt" "$out/memcheck.txt" >> "$out/log.txt"
cat "$out/log.txt"
