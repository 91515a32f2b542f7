#!/bin/bash
# bench/gdn_conv_device.sh — the conv update's device call (issue 27, contract 1) in one script,
# every step under its own time limit, logs and results under $OUT. Correctness first, three test
# processes side by side: the conv kernel tests of every catalogued mapping (bitwise, padded rows,
# strided x); the protocol smoke and the M16 cases; compute-sanitizer memcheck of both sets.
# Then, one at a time: the conv floors (bench/gdn_floor.cu --conv-only: memory floors of each
# grid, the SiLU-issue floor), the driver's conv records (every candidate, B 64, 16, 1) and
# bench/gdn.py (rooflines, floors, torch peers within a time budget).
#   carry: .carry-conv (bin/: test_gdn_gpu netra-bench-gdn gdn-floor; code_objects/: the sm90a
#          gdn cubins), copied to build-conv/ here.
#   usage: OUT=... bash bench/gdn_conv_device.sh
set -u
B=build-conv
export PYTHONUNBUFFERED=1
mkdir -p "$B/tests" "$B/code_objects"
cp .carry-conv/bin/* "$B/tests/" && cp .carry-conv/code_objects/* "$B/code_objects/"
L="$OUT/conv_logs.txt"
nvidia-smi -L > "$L" 2>&1
G="$B/tests/test_gdn_gpu"
START=$(date +%s)
timeout 50 "$G" --duration=true -tc="conv update*" > "$OUT/conv_gpu_tests.txt" 2>&1 &
P1=$!
timeout 50 "$G" --duration=true -tc="protocol smoke*,M16*" > "$OUT/conv_gpu_smoke_m16.txt" 2>&1 &
P2=$!
timeout 55 compute-sanitizer --tool memcheck --error-exitcode 9 "$G" -tc="conv update*" > "$OUT/conv_memcheck.txt" 2>&1 &
P3=$!
timeout 55 compute-sanitizer --tool memcheck --error-exitcode 9 "$G" -tc="M16*,protocol smoke*" > "$OUT/conv_memcheck_m16_smoke.txt" 2>&1 &
P4=$!
{
  for f in "$B"/code_objects/gdn-conv-sm90a-64-12-0-*.cubin; do
    sass=$(timeout 10 cuobjdump --dump-sass "$f" 2>/dev/null)
    echo "$(basename "$f") ALL=$(grep -cE '^ +/\*[0-9a-f]{4}\*/' <<< "$sass") FFMA=$(grep -c ' FFMA ' <<< "$sass") MUFU=$(grep -c 'MUFU' <<< "$sass") \
FCHK=$(grep -c 'FCHK' <<< "$sass") BSSY=$(grep -c 'BSSY' <<< "$sass") CALL=$(grep -c 'CALL' <<< "$sass") LDG=$(grep -c ' LDG' <<< "$sass") \
STG=$(grep -c ' STG' <<< "$sass") LDL_STL=$(grep -c ' [LS][DT]L' <<< "$sass")"
  done
} > "$OUT/sass.tmp" 2>&1
for p in $P1 $P2 $P3 $P4; do wait $p; echo "rc[$p]=$?" >> "$L"; done
echo "== tests took $(( $(date +%s) - START )) s" >> "$L"
{ echo "== sass"; cat "$OUT/sass.tmp"; } >> "$L"; rm -f "$OUT/sass.tmp"
echo "== gdn-floor --conv-only" >> "$L"
timeout 15 "$B/tests/gdn-floor" --conv-only > "$OUT/conv_floor.jsonl" 2>> "$L"
echo "rc=$?" >> "$L"
mkdir -p /tmp/gdn-dump
echo "== netra-bench-gdn --conv-only" >> "$L"
timeout 35 "$B/tests/netra-bench-gdn" --conv-only --dump /tmp/gdn-dump > "$OUT/conv_bench.jsonl" 2>> "$L"
echo "rc=$?" >> "$L"
echo "== bench/gdn.py" >> "$L"
timeout 40 python3 bench/gdn.py --netra-bench "$B/tests/netra-bench-gdn" --records "$OUT/conv_bench.jsonl" --dump /tmp/gdn-dump \
  --floors "$OUT/conv_floor.jsonl" --floor-out "$OUT/conv_floor_h200.json" --out "$OUT/conv_h200.json" --compile-peers 1 --peer-seconds 12 \
  >> "$L" 2>&1
echo "rc=$?" >> "$L"
for f in conv_gpu_tests.txt conv_gpu_smoke_m16.txt conv_memcheck.txt conv_memcheck_m16_smoke.txt; do [ -f "$OUT/$f" ] && echo "== $f" && tail -n 4 "$OUT/$f"; done
grep -E "^== |^rc" "$L"
