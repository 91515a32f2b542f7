#!/bin/bash
# bench/gdn_device.sh — issue 27's device call in one script, every step under its own time limit,
# logs and results under $OUT. Correctness first, test processes side by side (their GPU work is
# small; the host oracles and pool copies are the cost): the kernel tests of every catalogued
# mapping with the protocol smoke; the default schedule's every-B and graph cases; the prefetching
# whole-head schedule's every-B and graph cases; the one-token decode (every B and its captured
# graphs); compute-sanitizer memcheck of the smoke (every schedule) and the refusals. Then the
# per-opcode SASS counts of the replay, K0 and conv loops (bench/gdn_sass.py), and one at a time the
# floors (bench/gdn_floor.cu), the benchmark driver (every mapping candidate at the target shapes)
# and bench/gdn.py (rooflines, floors, torch peers within a time budget).
# GDN_SCOPE=cores: the recurrent cores alone — the kernel tests of K0 (every catalogued mapping),
# the refusals and the smoke, the whole-head prefetch schedule's protocol, memcheck of the smoke and
# the refusals, racecheck of the M16 cases, the K0 / replay SASS counts with the whole-head K0's
# full SASS, the floors, the driver's K0 and replay records (--cores-only) and the torch eager peer
# (no torch.compile: 2538 us for K0 B 64 at 434d4cf).
# GDN_SCOPE=decode: the one-token decode core alone — test_gdn_decode_gpu (the mapping candidates'
# protocol beside the default's every-B and graph cases), the driver's decode records
# (--decode-only), bench/gdn.py's torch eager peer of the default map, and where carried the
# access-pattern probe lab/gdn/decode_access_floor.cu (no other floors run).
# GDN_SCOPE=lds: the state-through-LDS maps (Staging 3) — the kernel tests of K0 / M16 (every
# catalogued mapping), the refusals and the smoke; the Staging 3 schedules' every-B and graph
# protocol; M16 behind its precompute (programmatic launch) eager and graph-replayed; the decode
# default map's tests (its copy is now asynchronous); memcheck of the smoke and of the M16 chain,
# racecheck of the M16 cores; the replay SASS counts; the driver's --lds-only records.
#   carry: .carry-gdn (bin/: test_gdn_gpu test_gdn_decode_gpu netra-bench-gdn gdn-floor;
#          code_objects/: the sm90a gdn cubins), copied to build-gdn/ here; GDN_CARRY and
#          GDN_BUILD name others (the decode scope needs only test_gdn_decode_gpu, netra-bench-gdn
#          and the T 1 cubins).
# GDN_SCOPE=m16 (or m16_replay): M16 (the two-launch chain and the precompute fused in) and the
# replay on quarter heads (2 warps) — the precompute and M16 kernel tests (the chain test: every M16
# form against the host chain), the refusals, the protocol smoke, the quarter-head schedule's every-B
# and graph protocol, memcheck of the chain and the smoke, racecheck of the fused M16 cores, their
# SASS counts, gdn-floor --residency-only, then the driver's --m16-only --once (driver-s) and
# --maps-only (the third limit: the replay maps, the shipped K0 at B 64) records; where the carry
# has code_objects_before/ (a base revision's cubins), the same M16, B 128 replay and K0 records
# from those (GDN_BEFORE_S seconds).
#   usage: OUT=... NETRA_GIT_REVISION=<commit> [GDN_SCOPE=cores|decode|lds|m16|m16_replay] bash bench/gdn_device.sh [tests-s driver-s peers-s]
set -u
B=${GDN_BUILD:-build-gdn}
T1=${1:-75} T2=${2:-65} T3=${3:-15}
CORES=0
[ "${GDN_SCOPE:-all}" = cores ] && CORES=1
export PYTHONUNBUFFERED=1
mkdir -p "$B/tests" "$B/code_objects"
CARRY=${GDN_CARRY:-.carry-gdn}
cp "$CARRY"/bin/* "$B/tests/" && cp "$CARRY"/code_objects/* "$B/code_objects/"
L="$OUT/gdn_logs.txt"  # at most 8 files come back: the logs share gdn_logs, gdn_gpu_tests and gdn_sanitizers
nvidia-smi -L > "$L" 2>&1
if [ "${GDN_SCOPE:-all}" = decode ]; then
  D="$B/tests/test_gdn_decode_gpu"
  timeout "$T1" "$D" --duration=true -tc="*candidate*" > "$OUT/gdn_gpu_tests.txt" 2>&1 &
  P1=$!
  timeout "$T1" "$D" --duration=true -tce="*candidate*" > /tmp/gdn_decode_default.txt 2>&1 &
  P2=$!
  wait $P1; echo "rc[candidates]=$?" >> "$L"
  wait $P2; echo "rc[default]=$?" >> "$L"
  { echo "== the default map"; cat /tmp/gdn_decode_default.txt; } >> "$OUT/gdn_gpu_tests.txt"
  mkdir -p /tmp/gdn-dump
  echo "== netra-bench-gdn --decode-only" >> "$L"
  timeout "$T2" "$B/tests/netra-bench-gdn" --decode-only --dump /tmp/gdn-dump > "$OUT/gdn_decode_bench.jsonl" 2>> "$L"
  echo "rc=$?" >> "$L"
  echo "== bench/gdn.py" >> "$L"
  timeout $((T3 + 30)) python3 bench/gdn.py --netra-bench "$B/tests/netra-bench-gdn" --records "$OUT/gdn_decode_bench.jsonl" --dump /tmp/gdn-dump \
    --out "$OUT/gdn_decode_h200.json" --compile-peers 0 --peer-seconds "$T3" >> "$L" 2>&1
  echo "rc=$?" >> "$L"
  if [ -x "$B/tests/gdn-decode-access-floor" ]; then  # lab/gdn/decode_access_floor.cu, where carried (its header says how to build it)
    echo "== gdn-decode-access-floor" >> "$L"
    timeout 30 "$B/tests/gdn-decode-access-floor" > "$OUT/gdn_decode_access_floor.jsonl" 2>> "$L"
    echo "rc=$?" >> "$L"
  fi
  grep -E "^== |test cases:|Status" "$OUT/gdn_gpu_tests.txt"
  grep -E "^== |^rc" "$L"
  exit 0
fi
G="$B/tests/test_gdn_gpu"
# Test processes side by side, each under its limit (bg); SASS counts; the summary.
START=$(date +%s)
PIDS=""
bg() { local log=$1; shift; timeout "$T1" "$@" > "$log" 2>&1 & PIDS="$PIDS $!"; }
sass_counts() {  # sass_counts ELEMENTS CUBIN...: bench/gdn_sass.py's per-loop counts of each
  local elements=$1 f
  shift
  for f in "$@"; do
    timeout 10 cuobjdump --dump-sass "$f" > /tmp/gdn.sass 2>&1
    echo "== $(basename "$f")"
    timeout 10 python3 bench/gdn_sass.py /tmp/gdn.sass --elements "$elements"
  done
}
wait_tests() {
  for p in $PIDS; do wait "$p"; echo "rc[$p]=$?" >> "$L"; done
  echo "== tests took $(( $(date +%s) - START )) s" >> "$L"
}
# The side processes' logs joined to the returned files: each test log whole under its name, each
# sanitizer log's summary (its last 12 lines) under a title.
append_tests() { for f in "$@"; do [ -f "$f" ] && { echo "== $(basename "$f")"; cat "$f"; } >> "$OUT/gdn_gpu_tests.txt"; done; return 0; }
append_sanitizer() { [ -f "$2" ] && { echo "== $1"; tail -n 12 "$2"; } >> "$OUT/gdn_sanitizers.txt"; return 0; }
summary() {
  grep -E "^== |test cases:|Status" "$OUT/gdn_gpu_tests.txt"
  grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$OUT/gdn_sanitizers.txt"
  grep -E "^== |^rc" "$L"
}
case "${GDN_SCOPE:-all}" in m16 | m16_replay) M16=1 ;; *) M16=0 ;; esac
if [ $M16 = 1 ]; then
  bg "$OUT/gdn_gpu_tests.txt" "$G" --duration=true -tc="precompute*,M16*,refused*"
  bg /tmp/gdn_smoke.txt "$G" --duration=true -tc="protocol smoke*"
  bg /tmp/gdn_quarter.txt "$G" --duration=true -tc="protocol? quarter-head replay schedule (state through LDS): every*"
  bg /tmp/gdn_graphs.txt "$G" --duration=true -tc="protocol? quarter-head replay schedule: one*"
  bg "$OUT/gdn_sanitizers.txt" compute-sanitizer --tool memcheck --error-exitcode 9 "$G" -tc="M16 behind*"
  bg /tmp/gdn_memcheck_smoke.txt compute-sanitizer --tool memcheck --error-exitcode 9 "$G" -tc="protocol smoke*"
  bg /tmp/gdn_racecheck.txt compute-sanitizer --tool racecheck --error-exitcode 9 "$G" -tc="M16 behind*1? 0? 1? 1? 32>>"
  { sass_counts 32 "$B"/code_objects/gdn-recurrent-sm90a-1-1-16-*-8-3-4-1-0-1*.cubin
    sass_counts 64 "$B"/code_objects/gdn-replay-sm90a-2-128-12-*-16-3-[28]-2.cubin; } > "$OUT/gdn_sass.txt" 2>&1
  echo "== gdn-floor --residency-only" >> "$L"
  timeout 30 "$B/tests/gdn-floor" --residency-only > "$OUT/gdn_floor.jsonl" 2>> "$L"
  echo "rc=$?" >> "$L"
  wait_tests
  append_tests /tmp/gdn_smoke.txt /tmp/gdn_quarter.txt /tmp/gdn_graphs.txt
  append_sanitizer "memcheck, protocol smoke" /tmp/gdn_memcheck_smoke.txt
  append_sanitizer "racecheck, M16 with the precompute fused in" /tmp/gdn_racecheck.txt
  echo "== netra-bench-gdn --m16-only --once" >> "$L"
  timeout "$T2" "$B/tests/netra-bench-gdn" --m16-only --once > "$OUT/gdn_m16_bench.jsonl" 2>> "$L"
  echo "rc=$?" >> "$L"
  echo "== netra-bench-gdn --maps-only" >> "$L"
  timeout "$T3" "$B/tests/netra-bench-gdn" --maps-only > "$OUT/gdn_replay_bench.jsonl" 2>> "$L"
  echo "rc=$?" >> "$L"
  if [ -d "$CARRY/code_objects_before" ]; then  # the same records from the code objects of a base revision (GDN_BEFORE_S seconds)
    cp "$CARRY"/code_objects_before/* "$B/code_objects/"
    echo "== the base revision's code objects: netra-bench-gdn --m16-only --once, --maps-only --once" >> "$L"
    timeout "${GDN_BEFORE_S:-30}" bash -c "\"$B/tests/netra-bench-gdn\" --m16-only --once; \"$B/tests/netra-bench-gdn\" --maps-only --once" \
      > "$OUT/gdn_before_bench.jsonl" 2>> "$L"
    echo "rc=$?" >> "$L"
  fi
  summary
  exit 0
fi
if [ "${GDN_SCOPE:-all}" = lds ]; then
  bg "$OUT/gdn_gpu_tests.txt" "$G" --duration=true -tc="K0*,M16*,refused*,protocol smoke*"
  bg /tmp/gdn_lds_prefetch.txt "$G" --duration=true -tc="protocol? state-through-LDS prefetch schedule: every*"
  bg /tmp/gdn_lds_plain.txt "$G" --duration=true -tc="protocol? state-through-LDS schedule: every*"
  bg /tmp/gdn_lds_graph.txt "$G" --duration=true -tc="protocol? state-through-LDS schedules: one*"
  bg /tmp/gdn_decode.txt "$B/tests/test_gdn_decode_gpu" --duration=true -tce="*candidate*"
  bg "$OUT/gdn_sanitizers.txt" compute-sanitizer --tool memcheck --error-exitcode 9 "$G" -tc="protocol smoke*"
  bg /tmp/gdn_memcheck_m16.txt compute-sanitizer --tool memcheck --error-exitcode 9 "$G" -tc="M16 behind*"
  bg /tmp/gdn_racecheck.txt compute-sanitizer --tool racecheck --error-exitcode 9 "$G" -tc="M16 core*"
  sass_counts 64 "$B"/code_objects/gdn-replay-sm90a-2-128-12-*-16-[13]-8-2*.cubin > "$OUT/gdn_sass.txt" 2>&1
  wait_tests
  append_tests /tmp/gdn_lds_prefetch.txt /tmp/gdn_lds_plain.txt /tmp/gdn_lds_graph.txt /tmp/gdn_decode.txt
  append_sanitizer racecheck /tmp/gdn_racecheck.txt
  append_sanitizer "memcheck, M16 behind its precompute" /tmp/gdn_memcheck_m16.txt
  echo "== netra-bench-gdn --lds-only" >> "$L"
  timeout "$T2" "$B/tests/netra-bench-gdn" --lds-only > "$OUT/gdn_lds_bench.jsonl" 2>> "$L"
  echo "rc=$?" >> "$L"
  summary
  exit 0
fi
# ---- correctness (parallel processes, each under its limit; doctest filters split at commas: "?" stands for one)
if [ $CORES = 1 ]; then
  bg "$OUT/gdn_gpu_tests.txt" "$G" --duration=true -tc="K0*,refused*,protocol smoke*"
  bg /tmp/gdn_racecheck.txt compute-sanitizer --tool racecheck --error-exitcode 9 "$G" -tc="M16 core*"
  SASS="$B/code_objects/gdn-recurrent-sm90a-0-64-12-*-16-1-*-2.cubin $B/code_objects/gdn-replay-sm90a-2-128-12-1-16-1-8-2*.cubin"
else
  bg "$OUT/gdn_gpu_tests.txt" "$G" --duration=true -tc="conv update*,precompute*,K0*,M16*,refused*,protocol smoke*"
  bg /tmp/gdn_gpu_protocol.txt "$G" --duration=true -tc="protocol: verify*,protocol in one*"
  bg /tmp/gdn_decode.txt "$B/tests/test_gdn_decode_gpu" --duration=true
  SASS="$B/code_objects/gdn-replay-sm90a-*.cubin $B/code_objects/gdn-conv-sm90a-64-12-0-*-1-256-*.cubin"
fi
bg /tmp/gdn_gpu_prefetch.txt "$G" --duration=true -tc="protocol? whole-head prefetch*"
bg "$OUT/gdn_sanitizers.txt" compute-sanitizer --tool memcheck --error-exitcode 9 "$G" -tc="refused*,protocol smoke*"
for f in $SASS; do
  timeout 10 cuobjdump --dump-sass "$f" > /tmp/gdn.sass 2>&1
  echo "== $(basename "$f")"
  timeout 10 python3 bench/gdn_sass.py /tmp/gdn.sass --elements 64
  case "$f" in *0-64-12-0-16-1-8-2.cubin) cp /tmp/gdn.sass /tmp/gdn_k0_head.sass ;; esac
done > "$OUT/gdn_sass.txt" 2>&1
wait_tests
append_tests /tmp/gdn_gpu_protocol.txt /tmp/gdn_gpu_prefetch.txt /tmp/gdn_decode.txt
append_sanitizer racecheck /tmp/gdn_racecheck.txt
[ -f /tmp/gdn_k0_head.sass ] && { echo "== full SASS of the whole-head K0 (FP32 state)"; cat /tmp/gdn_k0_head.sass; } >> "$OUT/gdn_sass.txt"
# ---- timing (serial)
echo "== gdn-floor" >> "$L"
timeout 30 "$B/tests/gdn-floor" > "$OUT/gdn_floor.jsonl" 2>> "$L"
echo "rc=$?" >> "$L"
mkdir -p /tmp/gdn-dump
DRIVER=""
[ $CORES = 1 ] && DRIVER=--cores-only
echo "== netra-bench-gdn $DRIVER" >> "$L"
timeout "$T2" "$B/tests/netra-bench-gdn" $DRIVER --dump /tmp/gdn-dump > "$OUT/gdn_bench.jsonl" 2>> "$L"
echo "rc=$?" >> "$L"
echo "== bench/gdn.py" >> "$L"
timeout $((T3 + 30)) python3 bench/gdn.py --netra-bench "$B/tests/netra-bench-gdn" --records "$OUT/gdn_bench.jsonl" --dump /tmp/gdn-dump \
  --floors "$OUT/gdn_floor.jsonl" --floor-out "$OUT/gdn_floor_h200.json" --out "$OUT/gdn_h200.json" --compile-peers $((1 - CORES)) \
  --peer-seconds "$T3" >> "$L" 2>&1
echo "rc=$?" >> "$L"
summary
