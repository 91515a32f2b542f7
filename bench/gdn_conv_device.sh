#!/bin/bash
# bench/gdn_conv_device.sh — the conv update's and the precompute's device call (issue 27,
# contracts 1 and 2) in one script, every step under its own time limit, logs and results under
# $OUT (7 files; 8 with CONV_FULL_SASS, cubin names whose whole SASS goes to conv_sass.txt). Correctness first, side by side: the conv kernel tests of every catalogued mapping
# (bitwise, padded rows, strided x) and the precompute tests (a, b compact and as column views at a
# row stride), and compute-sanitizer memcheck of both; with CONV_CORES=1 also the recurrent cores'
# and the one-token decode's tests (GDN_SCOPE=cores' correctness half: the K0 kernel tests, the
# refusals, the protocol smoke, the whole-head prefetch schedule's protocol, memcheck of the
# refusals and the smoke, racecheck of the M16 cores; test_gdn_decode_gpu), their logs joined to
# the conv's (CONV_PREFETCH_GRAPH=1: the prefetch schedule's graph case alone). Then, one at a time: the SASS counts of the conv cubins (the branch-free SiLU division:
# no FCHK, CALL or BSSY; MUFU only where Division 1 seeds the reciprocal), the conv floors
# (bench/gdn_floor.cu --conv-only; bench/gdn_conv_floor.cu: the SiLU-issue floor with the IEEE and
# the branch-free divisions), the driver's conv records (every candidate, B 64, 32, 16, 8, 4, 2, 1) and
# bench/gdn.py (rooflines, floors, torch peers within a time budget).
#   carry: .carry-conv (bin/: test_gdn_gpu netra-bench-gdn gdn-floor gdn-conv-floor, optionally
#          test_gdn_conv_dispatch_gpu (the batch-ranged dispatch, every B 1..64, and its memcheck), and with
#          CONV_CORES=1 test_gdn_decode_gpu; code_objects/: the sm90a gdn conv and precompute
#          cubins, with CONV_CORES=1 every sm90a gdn cubin; REVISION), copied to build-conv/ here.
# The 00:28 UTC call took 38 s with bench/gdn.py cut at 22 s; it now has 60 s (records are written
# one by one: a cut keeps them); the cores' tests add about 40 s to the correctness half. The driver's
# conv records at seven batches (about 130 records) have 70 s a round (CONV_BENCH_S).
# CONV_ROUNDS=2: the driver's conv records a second time, in a second process, after bench/gdn.py
# (conv_bench_round2.jsonl, the 8th file in place of conv_sass.txt): the spread between rounds.
#   usage: OUT=... [CONV_CORES=1] [CONV_ROUNDS=2] bash bench/gdn_conv_device.sh   (run timeout_s 300)
set -u
B=build-conv
export PYTHONUNBUFFERED=1
mkdir -p "$B/tests" "$B/code_objects"
cp .carry-conv/bin/* "$B/tests/" && cp .carry-conv/code_objects/* "$B/code_objects/"
L="$OUT/conv_logs.txt"
{ nvidia-smi -L; echo "revision $(cat .carry-conv/REVISION 2>/dev/null)"; date -u; } > "$L" 2>&1
G="$B/tests/test_gdn_gpu"
TL=${CONV_TESTS_S:-36}
START=$(date +%s)
PIDS=""
bg() { local log=$1; shift; timeout "$TL" "$@" > "$log" 2>&1 & PIDS="$PIDS $!"; }
bg "$OUT/conv_gpu_tests.txt" "$G" --duration=true -tc="conv update*,precompute*"
bg "$OUT/conv_memcheck.txt" compute-sanitizer --tool memcheck --error-exitcode 9 "$G" -tc="conv update*,precompute*"
if [ "${CONV_CORES:-0}" = 1 ]; then
  bg /tmp/cores_tests.txt "$G" --duration=true -tc="K0*,refused*,protocol smoke*"
  bg /tmp/cores_prefetch.txt "$G" --duration=true -tc="protocol? whole-head prefetch*"
  bg /tmp/cores_decode.txt "$B/tests/test_gdn_decode_gpu" --duration=true
  bg /tmp/cores_memcheck.txt compute-sanitizer --tool memcheck --error-exitcode 9 "$G" -tc="refused*,protocol smoke*"
  bg /tmp/cores_racecheck.txt compute-sanitizer --tool racecheck --error-exitcode 9 "$G" -tc="M16 core*"
fi
if [ -x "$B/tests/test_gdn_conv_dispatch_gpu" ]; then  # the batch-ranged dispatch at every B 1..64
  bg /tmp/conv_dispatch.txt "$B/tests/test_gdn_conv_dispatch_gpu" --duration=true
  bg /tmp/conv_dispatch_memcheck.txt compute-sanitizer --tool memcheck --error-exitcode 9 "$B/tests/test_gdn_conv_dispatch_gpu"
fi
[ "${CONV_PREFETCH_GRAPH:-0}" = 1 ] && bg /tmp/cores_prefetch.txt "$G" --duration=true -tc="protocol? whole-head prefetch schedule: one*"
{
  for f in "$B"/code_objects/gdn-conv-sm90a-*.cubin; do
    sass=$(timeout 10 cuobjdump --dump-sass "$f" 2>/dev/null)
    echo "$(basename "$f") ALL=$(grep -cE '^ +/\*[0-9a-f]{4}\*/' <<< "$sass") FFMA=$(grep -c ' FFMA ' <<< "$sass") MUFU=$(grep -c 'MUFU' <<< "$sass") \
FCHK=$(grep -c 'FCHK' <<< "$sass") BSSY=$(grep -c 'BSSY' <<< "$sass") CALL=$(grep -c 'CALL' <<< "$sass") LDG=$(grep -c ' LDG' <<< "$sass") \
FSEL=$(grep -c ' FSEL' <<< "$sass") SEL=$(grep -c ' SEL ' <<< "$sass") FSETP=$(grep -c ' FSETP' <<< "$sass") ISETP=$(grep -c ' ISETP' <<< "$sass") FMNMX=$(grep -c ' FMNMX' <<< "$sass") \
STG=$(grep -c ' STG' <<< "$sass") STG_CS=$(grep -c 'STG.E.EF\|STG.*\.EF' <<< "$sass") LDL_STL=$(grep -c ' [LS][DT]L' <<< "$sass")"
  done
} > "$OUT/sass.tmp" 2>&1
if [ -n "${CONV_FULL_SASS:-}" ]; then
  for f in $CONV_FULL_SASS; do  # the full SASS of the named cubins (the 8th file)
    echo "== $f"; timeout 10 cuobjdump --dump-sass "$B/code_objects/$f"
  done > "$OUT/conv_sass.txt" 2>&1
fi
for p in $PIDS; do wait $p; echo "rc[$p]=$?" >> "$L"; done
echo "== tests took $(( $(date +%s) - START )) s" >> "$L"
for f in /tmp/conv_dispatch.txt /tmp/cores_tests.txt /tmp/cores_prefetch.txt /tmp/cores_decode.txt; do
  [ -f "$f" ] && { echo "== $(basename "$f")"; cat "$f"; } >> "$OUT/conv_gpu_tests.txt"
done
for f in /tmp/conv_dispatch_memcheck.txt /tmp/cores_memcheck.txt /tmp/cores_racecheck.txt; do
  [ -f "$f" ] && { echo "== $(basename "$f")"; tail -n 12 "$f"; } >> "$OUT/conv_memcheck.txt"
done
{ echo "== sass"; cat "$OUT/sass.tmp"; } >> "$L"; rm -f "$OUT/sass.tmp"
echo "== gdn-floor --conv-only, gdn-conv-floor" >> "$L"
timeout 14 "$B/tests/gdn-floor" --conv-only > "$OUT/conv_floor.jsonl" 2>> "$L"
echo "rc=$?" >> "$L"
timeout 10 "$B/tests/gdn-conv-floor" >> "$OUT/conv_floor.jsonl" 2>> "$L"
echo "rc=$?" >> "$L"
mkdir -p /tmp/gdn-dump
echo "== netra-bench-gdn --conv-only" >> "$L"
timeout ${CONV_BENCH_S:-70} "$B/tests/netra-bench-gdn" --conv-only --dump /tmp/gdn-dump > "$OUT/conv_bench.jsonl" 2>> "$L"
echo "rc=$?" >> "$L"
echo "== bench/gdn.py" >> "$L"
timeout ${CONV_PY_S:-60} python3 bench/gdn.py --netra-bench "$B/tests/netra-bench-gdn" --records "$OUT/conv_bench.jsonl" --dump /tmp/gdn-dump \
  --floors "$OUT/conv_floor.jsonl" --floor-out "$OUT/conv_floor_h200.json" --out "$OUT/conv_h200.json" --compile-peers 1 \
  --peer-seconds $(( ${CONV_PY_S:-60} - 20 )) >> "$L" 2>&1
echo "rc=$?" >> "$L"
if [ "${CONV_ROUNDS:-1}" = 2 ]; then
  echo "== netra-bench-gdn --conv-only (round 2)" >> "$L"
  timeout ${CONV_BENCH_S:-70} "$B/tests/netra-bench-gdn" --conv-only > "$OUT/conv_bench_round2.jsonl" 2>> "$L"
  echo "rc=$?" >> "$L"
fi
echo "== total $(( $(date +%s) - START )) s" >> "$L"
for f in conv_gpu_tests.txt; do [ -f "$OUT/$f" ] && echo "== $f" && grep -E "^== |test cases:|Status" "$OUT/$f"; done
grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$OUT/conv_memcheck.txt"
grep -E "^== |^rc" "$L"
