#!/bin/bash
# bench/gdn_cores_device.sh — one H200 call for the recurrent cores (issue 27: K0 verify and the
# accepted-prefix replay), every step under its own time limit, logs and results under $OUT.
# Correctness first, side by side: the kernel tests of every catalogued K0 mapping with the
# refusals and the protocol smoke of every schedule; the shipped (whole-head prefetch) schedule's
# every-B and graph protocol; compute-sanitizer memcheck of the refusals and the smoke, racecheck
# of the M16 cases (staged LDS, small). Then the SASS of the K0 / replay cores (per-opcode counts of the token loop,
# bench/gdn_sass.py), and one at a time the floors (bench/gdn_floor.cu), the driver's K0 and replay
# records (--cores-only) and bench/gdn.py (rooflines, floors, the torch eager peer within a time
# budget; torch.compile, 2538 us for K0 B 64 at 434d4cf, is left out to fit the call).
#   carry: .carry-gdn (bin/: test_gdn_gpu netra-bench-gdn gdn-floor; code_objects/: the sm90a gdn
#          cubins), copied to build-gdn/ here.
#   usage: OUT=... NETRA_GIT_REVISION=<commit> bash bench/gdn_cores_device.sh [tests-s driver-s peers-s]
set -u
B=build-gdn
T1=${1:-60} T2=${2:-50} T3=${3:-8}
export PYTHONUNBUFFERED=1
mkdir -p "$B/tests" "$B/code_objects"
cp .carry-gdn/bin/* "$B/tests/" && cp .carry-gdn/code_objects/* "$B/code_objects/"
L="$OUT/gdn_logs.txt"  # at most 8 files come back: the small logs share one
nvidia-smi -L > "$L" 2>&1
G="$B/tests/test_gdn_gpu"
START=$(date +%s)
# (doctest filters split at commas: "?" stands for one)
timeout "$T1" "$G" --duration=true -tc="K0*,refused*,protocol smoke*" > "$OUT/gdn_gpu_tests.txt" 2>&1 &
P1=$!
timeout "$T1" "$G" --duration=true -tc="protocol? whole-head prefetch*" > /tmp/gdn_gpu_prefetch.txt 2>&1 &
P2=$!
timeout "$T1" compute-sanitizer --tool memcheck --error-exitcode 9 "$G" -tc="refused*,protocol smoke*" > "$OUT/gdn_sanitizers.txt" 2>&1 &
P3=$!
timeout "$T1" compute-sanitizer --tool racecheck --error-exitcode 9 "$G" -tc="M16 core*" > /tmp/gdn_racecheck.txt 2>&1 &
P4=$!
{
  for f in "$B"/code_objects/gdn-recurrent-sm90a-0-64-12-*-16-1-*-2*.cubin "$B"/code_objects/gdn-replay-sm90a-2-128-12-1-16-1-8-2*.cubin; do
    timeout 10 cuobjdump --dump-sass "$f" > /tmp/gdn.sass 2>&1
    echo "== $(basename "$f")"
    timeout 10 python3 bench/gdn_sass.py /tmp/gdn.sass --elements 64
    case "$f" in *0-64-12-0-16-1-8-2.cubin) cp /tmp/gdn.sass "/tmp/$(basename "$f").sass" ;; esac
  done
} > "$OUT/gdn_sass.txt" 2>&1
for p in $P1 $P2 $P3 $P4; do wait $p; echo "rc[$p]=$?" >> "$L"; done
echo "== tests took $(( $(date +%s) - START )) s" >> "$L"
{ echo "== racecheck"; tail -n 12 /tmp/gdn_racecheck.txt; } >> "$OUT/gdn_sanitizers.txt"
{ echo "== the whole-head prefetch schedule's protocol"; cat /tmp/gdn_gpu_prefetch.txt; } >> "$OUT/gdn_gpu_tests.txt"
for s in /tmp/gdn-recurrent-*.sass; do { echo "== full SASS $(basename "$s")"; cat "$s"; } >> "$OUT/gdn_sass.txt"; done
# ---- timing (serial)
echo "== gdn-floor" >> "$L"
timeout 30 "$B/tests/gdn-floor" > "$OUT/gdn_floor.jsonl" 2>> "$L"
echo "rc=$?" >> "$L"
mkdir -p /tmp/gdn-dump
echo "== netra-bench-gdn --cores-only" >> "$L"
timeout "$T2" "$B/tests/netra-bench-gdn" --cores-only --dump /tmp/gdn-dump > "$OUT/gdn_bench.jsonl" 2>> "$L"
echo "rc=$?" >> "$L"
echo "== bench/gdn.py" >> "$L"
timeout $((T3 + 30)) python3 bench/gdn.py --netra-bench "$B/tests/netra-bench-gdn" --records "$OUT/gdn_bench.jsonl" --dump /tmp/gdn-dump \
  --floors "$OUT/gdn_floor.jsonl" --floor-out "$OUT/gdn_floor_h200.json" --out "$OUT/gdn_h200.json" --compile-peers 0 --peer-seconds "$T3" \
  >> "$L" 2>&1
echo "rc=$?" >> "$L"
grep -E "test cases:|Status" "$OUT/gdn_gpu_tests.txt"
grep -E "ERROR SUMMARY|RACECHECK SUMMARY|test cases:" "$OUT/gdn_sanitizers.txt"
grep -E "^== |^rc" "$L"
grep -h '"k0_\|"replay_' "$OUT/gdn_floor.jsonl" | cut -c1-160
python3 -c "
import json,sys
for l in open('$OUT/gdn_bench.jsonl'):
    if l.startswith('{'):
        r=json.loads(l); s=r['shape']
        if s['batch'] in (64,128): print(r['contract'], r['instance'], s['state_dtype'], s.get('accepted',''), r['netra_graph_us'], r['correct'])
"
