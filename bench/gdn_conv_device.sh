#!/bin/bash
# bench/gdn_conv_device.sh — the conv update's and the precompute's device call (issue 27,
# contracts 1 and 2) in one script, every step under its own time limit, logs and results under
# $OUT (7 files). Correctness first, side by side: the conv kernel tests of every catalogued mapping
# (bitwise, padded rows, strided x) and the precompute tests (a, b compact and as column views at a
# row stride), and compute-sanitizer memcheck of both. Then, one at a time: the SASS counts of the
# conv cubins (the branch-free SiLU division: no FCHK, CALL or BSSY), the conv floors
# (bench/gdn_floor.cu --conv-only; bench/gdn_conv_floor.cu: the SiLU-issue floor with the IEEE
# and the branch-free division), the driver's conv records (every candidate, B 64, 16, 1) and
# bench/gdn.py (rooflines, floors, torch peers within a time budget).
#   carry: .carry-conv (bin/: test_gdn_gpu netra-bench-gdn gdn-floor gdn-conv-floor; code_objects/:
#          the sm90a gdn conv and precompute cubins; REVISION), copied to build-conv/ here.
# The 00:28 UTC call took 38 s with bench/gdn.py cut at 22 s (torch import, copy bandwidth and the
# first torch.compile peer); it now has 60 s (records are written one by one: a cut keeps them).
#   usage: OUT=... bash bench/gdn_conv_device.sh   (run timeout_s 120)
set -u
B=build-conv
export PYTHONUNBUFFERED=1
mkdir -p "$B/tests" "$B/code_objects"
cp .carry-conv/bin/* "$B/tests/" && cp .carry-conv/code_objects/* "$B/code_objects/"
L="$OUT/conv_logs.txt"
{ nvidia-smi -L; echo "revision $(cat .carry-conv/REVISION 2>/dev/null)"; date -u; } > "$L" 2>&1
G="$B/tests/test_gdn_gpu"
START=$(date +%s)
timeout 36 "$G" --duration=true -tc="conv update*,precompute*" > "$OUT/conv_gpu_tests.txt" 2>&1 &
P1=$!
timeout 38 compute-sanitizer --tool memcheck --error-exitcode 9 "$G" -tc="conv update*,precompute*" > "$OUT/conv_memcheck.txt" 2>&1 &
P2=$!
{
  for f in "$B"/code_objects/gdn-conv-sm90a-*.cubin; do
    sass=$(timeout 10 cuobjdump --dump-sass "$f" 2>/dev/null)
    echo "$(basename "$f") ALL=$(grep -cE '^ +/\*[0-9a-f]{4}\*/' <<< "$sass") FFMA=$(grep -c ' FFMA ' <<< "$sass") MUFU=$(grep -c 'MUFU' <<< "$sass") \
FCHK=$(grep -c 'FCHK' <<< "$sass") BSSY=$(grep -c 'BSSY' <<< "$sass") CALL=$(grep -c 'CALL' <<< "$sass") LDG=$(grep -c ' LDG' <<< "$sass") \
STG=$(grep -c ' STG' <<< "$sass") LDL_STL=$(grep -c ' [LS][DT]L' <<< "$sass")"
  done
} > "$OUT/sass.tmp" 2>&1
for p in $P1 $P2; do wait $p; echo "rc[$p]=$?" >> "$L"; done
echo "== tests took $(( $(date +%s) - START )) s" >> "$L"
{ echo "== sass"; cat "$OUT/sass.tmp"; } >> "$L"; rm -f "$OUT/sass.tmp"
echo "== gdn-floor --conv-only, gdn-conv-floor" >> "$L"
timeout 14 "$B/tests/gdn-floor" --conv-only > "$OUT/conv_floor.jsonl" 2>> "$L"
echo "rc=$?" >> "$L"
timeout 8 "$B/tests/gdn-conv-floor" >> "$OUT/conv_floor.jsonl" 2>> "$L"
echo "rc=$?" >> "$L"
mkdir -p /tmp/gdn-dump
echo "== netra-bench-gdn --conv-only" >> "$L"
timeout 28 "$B/tests/netra-bench-gdn" --conv-only --dump /tmp/gdn-dump > "$OUT/conv_bench.jsonl" 2>> "$L"
echo "rc=$?" >> "$L"
echo "== bench/gdn.py" >> "$L"
timeout 60 python3 bench/gdn.py --netra-bench "$B/tests/netra-bench-gdn" --records "$OUT/conv_bench.jsonl" --dump /tmp/gdn-dump \
  --floors "$OUT/conv_floor.jsonl" --floor-out "$OUT/conv_floor_h200.json" --out "$OUT/conv_h200.json" --compile-peers 1 --peer-seconds 40 \
  >> "$L" 2>&1
echo "rc=$?" >> "$L"
echo "== total $(( $(date +%s) - START )) s" >> "$L"
for f in conv_gpu_tests.txt conv_memcheck.txt; do [ -f "$OUT/$f" ] && echo "== $f" && tail -n 4 "$OUT/$f"; done
grep -E "^== |^rc" "$L"
