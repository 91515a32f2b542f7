#!/bin/bash
# bench/gdn_device.sh — issue 27's device call in one script, every step under its own time limit,
# logs and results under $OUT. Correctness first: four test processes side by side (their GPU
# work is small; the host oracles and pool copies are the cost): the kernel tests of every
# catalogued mapping with the protocol smoke; the default schedule's every-B and graph cases;
# the prefetching whole-head schedule's every-B and graph cases; the one-token decode (every B and
# its captured graphs); compute-sanitizer memcheck of the smoke (every schedule, the new kernels
# included) and the refusals. Then, one at a time, the floors (bench/gdn_floor.cu), the benchmark
# driver (every mapping candidate at the target shapes) and bench/gdn.py (rooflines, floors, torch
# peers within a time budget).
#   carry: .carry-gdn (bin/: test_gdn_gpu test_gdn_decode_gpu netra-bench-gdn gdn-floor;
#          code_objects/: the sm90a gdn cubins), copied to build-gdn/ here.
#   usage: OUT=... NETRA_GIT_REVISION=<commit> bash bench/gdn_device.sh [tests-s driver-s peers-s]
set -u
B=build-gdn
T1=${1:-75} T2=${2:-65} T3=${3:-15}
export PYTHONUNBUFFERED=1
mkdir -p "$B/tests" "$B/code_objects"
cp .carry-gdn/bin/* "$B/tests/" && cp .carry-gdn/code_objects/* "$B/code_objects/"
L="$OUT/gdn_logs.txt"  # at most 8 files come back: the small logs share one
nvidia-smi -L > "$L" 2>&1
G="$B/tests/test_gdn_gpu"
# ---- correctness (parallel processes, each under its limit)
START=$(date +%s)
timeout "$T1" "$G" --duration=true -tc="conv update*,precompute*,K0*,M16*,refused*,protocol smoke*" > "$OUT/gdn_gpu_tests.txt" 2>&1 &
P1=$!
timeout "$T1" "$G" --duration=true -tc="protocol: verify*,protocol in one*" > "$OUT/gdn_gpu_protocol.txt" 2>&1 &
P5=$!
timeout "$T1" "$G" --duration=true -tc="protocol? whole-head prefetch*" > "$OUT/gdn_gpu_prefetch.txt" 2>&1 &
P2=$!
timeout "$T1" "$B/tests/test_gdn_decode_gpu" --duration=true > "$OUT/gdn_decode.txt" 2>&1 &
P3=$!
timeout "$T1" compute-sanitizer --tool memcheck --error-exitcode 9 "$G" -tc="refused*,protocol smoke*" > "$OUT/gdn_memcheck.txt" 2>&1 &
P4=$!
{
  for f in "$B"/code_objects/gdn-replay-sm90a-*.cubin "$B"/code_objects/gdn-conv-sm90a-64-12-0-*-1-256-*.cubin; do
    sass=$(timeout 10 cuobjdump --dump-sass "$f" 2>/dev/null)
    echo "$(basename "$f") FFMA=$(grep -c ' FFMA ' <<< "$sass") FMUL=$(grep -c ' FMUL ' <<< "$sass") FADD=$(grep -c ' FADD ' <<< "$sass") \
SHFL=$(grep -c 'SHFL' <<< "$sass") LDS=$(grep -c ' LDS' <<< "$sass") STG=$(grep -c ' STG' <<< "$sass") MUFU=$(grep -c 'MUFU' <<< "$sass") \
CALL=$(grep -c 'CALL' <<< "$sass") UBLKPF=$(grep -c 'UBLKPF\|CCTL' <<< "$sass") ALL=$(grep -cE '^ +/\*[0-9a-f]{4}\*/' <<< "$sass") LDL_STL=$(grep -c ' [LS][DT]L' <<< "$sass")"
  done
} > "$OUT/sass.tmp" 2>&1
for p in $P1 $P5 $P2 $P3 $P4; do wait $p; echo "rc[$p]=$?" >> "$L"; done
echo "== tests took $(( $(date +%s) - START )) s" >> "$L"
{ echo "== sass"; cat "$OUT/sass.tmp"; } >> "$L"; rm -f "$OUT/sass.tmp"
# ---- timing (serial)
echo "== gdn-floor" >> "$L"
timeout 25 "$B/tests/gdn-floor" > "$OUT/gdn_floor.jsonl" 2>> "$L"
echo "rc=$?" >> "$L"
mkdir -p /tmp/gdn-dump
echo "== netra-bench-gdn" >> "$L"
timeout "$T2" "$B/tests/netra-bench-gdn" --dump /tmp/gdn-dump > "$OUT/gdn_bench.jsonl" 2>> "$L"
echo "rc=$?" >> "$L"
echo "== bench/gdn.py" >> "$L"
timeout $((T3 + 30)) python3 bench/gdn.py --netra-bench "$B/tests/netra-bench-gdn" --records "$OUT/gdn_bench.jsonl" --dump /tmp/gdn-dump \
  --floors "$OUT/gdn_floor.jsonl" --floor-out "$OUT/gdn_floor_h200.json" --out "$OUT/gdn_h200.json" --compile-peers 1 --peer-seconds "$T3" \
  >> "$L" 2>&1
echo "rc=$?" >> "$L"
for f in gdn_gpu_tests.txt gdn_gpu_protocol.txt gdn_gpu_prefetch.txt gdn_decode.txt gdn_memcheck.txt; do [ -f "$OUT/$f" ] && echo "== $f" && tail -n 4 "$OUT/$f"; done
grep -E "^== |^rc" "$L"
