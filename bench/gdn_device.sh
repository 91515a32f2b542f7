#!/bin/bash
# bench/gdn_device.sh — issue 27's device call, every step under its own time limit, logs and
# results under $OUT. Correctness first, in parallel (no timing runs then): the gdn GPU tests
# (kernels of every catalogued mapping, the verify/commit protocol of every shipped schedule),
# compute-sanitizer memcheck of the short GPU tests, the SASS FP32 operation counts of the K0
# cores; then, one at a time, the floors (bench/gdn_floor.cu), the benchmark driver (every mapping
# candidate) and bench/gdn.py (rooflines, floors, torch peers within a time budget).
#   carry: .carry-gdn (bin/: test_gdn_gpu netra-bench-gdn gdn-floor; code_objects/: the sm90a gdn
#          cubins), copied to build-gdn/ here (the binaries name build-gdn/code_objects).
#   usage: OUT=... [GDN_STEPS=all|tests|bench] bash bench/gdn_device.sh [tests-s driver-s peers-s]
#   (the GPU tests take about 250 s, the timing steps about 180: one half per call under a 300 s limit)
set -u
B=build-gdn
T1=${1:-250} T2=${2:-120} T3=${3:-30} STEPS=${GDN_STEPS:-all}
export PYTHONUNBUFFERED=1
mkdir -p "$B/tests" "$B/code_objects"
cp .carry-gdn/bin/* "$B/tests/" && cp .carry-gdn/code_objects/* "$B/code_objects/"
L="$OUT/gdn_logs.txt"  # at most 8 files come back: the small logs share one
nvidia-smi -L > "$L" 2>&1
# ---- correctness (parallel)
if [ "$STEPS" != bench ]; then
timeout "$T1" "$B/tests/test_gdn_gpu" --duration=true > "$OUT/gdn_gpu_tests.txt" 2>&1 &
TESTS=$!
timeout 60 compute-sanitizer --tool memcheck --error-exitcode 9 "$B/tests/test_gdn_gpu" \
  -tc="refused*,protocol smoke*" > "$OUT/gdn_memcheck.txt" 2>&1 &
MEMCHECK=$!
{
  for f in "$B"/code_objects/gdn-recurrent-sm90a-0-64-12-*.cubin "$B"/code_objects/gdn-replay-sm90a-*.cubin; do
    sass=$(timeout 10 cuobjdump --dump-sass "$f" 2>/dev/null)
    echo "$(basename "$f") FFMA=$(grep -c ' FFMA ' <<< "$sass") FMUL=$(grep -c ' FMUL ' <<< "$sass") FADD=$(grep -c ' FADD ' <<< "$sass") \
SHFL=$(grep -c 'SHFL' <<< "$sass") LDS=$(grep -c ' LDS' <<< "$sass") STG=$(grep -c ' STG' <<< "$sass") LDL_STL=$(grep -c ' [LS][DT]L' <<< "$sass")"
  done
} > "$OUT/sass.tmp" 2>&1
wait $TESTS; echo "rc=$?" >> "$OUT/gdn_gpu_tests.txt"
wait $MEMCHECK; echo "rc=$?" >> "$OUT/gdn_memcheck.txt"
{ echo "== sass (FP32 operations of the recurrent cores)"; cat "$OUT/sass.tmp"; } >> "$L"; rm -f "$OUT/sass.tmp"
fi
# ---- timing (serial)
if [ "$STEPS" != tests ]; then
echo "== gdn-floor" >> "$L"
timeout 25 "$B/tests/gdn-floor" > "$OUT/gdn_floor.jsonl" 2>> "$L"
echo "rc=$?" >> "$L"
mkdir -p /tmp/gdn-dump
echo "== netra-bench-gdn" >> "$L"
timeout "$T2" "$B/tests/netra-bench-gdn" --dump /tmp/gdn-dump > "$OUT/gdn_bench.jsonl" 2>> "$L"
echo "rc=$?" >> "$L"
echo "== bench/gdn.py" >> "$L"
timeout $((T3 + 25)) python3 bench/gdn.py --netra-bench "$B/tests/netra-bench-gdn" --records "$OUT/gdn_bench.jsonl" --dump /tmp/gdn-dump \
  --floors "$OUT/gdn_floor.jsonl" --floor-out "$OUT/gdn_floor_h200.json" --out "$OUT/gdn_h200.json" --compile-peers 1 --peer-seconds "$T3" \
  >> "$L" 2>&1
echo "rc=$?" >> "$L"
fi
for f in gdn_gpu_tests.txt gdn_memcheck.txt; do [ -f "$OUT/$f" ] && echo "== $f" && tail -n 3 "$OUT/$f"; done
grep -E "^== |^rc=" "$L"
grep -A8 "^== sass" "$L"
