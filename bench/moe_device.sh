#!/usr/bin/env bash
# One device call for the MoE family above the decode kernels (issue 29), in one of three modes;
# each step under its own time limit within BUDGET seconds (bench/moe_device_step.sh), logs in
# OUT/tests.txt and OUT/bench.txt, nvidia-smi's clocks in OUT/gpu.txt. The results files are
# copies of the committed ones that the benchmark scripts merge into (by record).
#   family  the GPU tests (the whole block across 1..768 and its graph buckets, the routers, the
#           grouped dispatch path, the ring forms' bits), the grouped floor, bench/moe_block.py,
#           bench/moe_grouped.py (every M and configuration) and bench/moe_routing.py, into
#           OUT/moe_h200.json and OUT/moe_grouped_floor_h200.json
#   block   the block's GPU tests up to 256 tokens, the grouped
#           dispatch path, then bench/moe_block.py at the decode and mid token counts with the
#           torch peers, into OUT/moe_block_h200.json
#   mid     17..256 tokens: the block's GPU cases at 24 and 32 tokens, 17..256 and the graph
#           buckets, the grouped dispatch path, the mid ring forms' bits; the grouped stages, their pairs and the experts path
#           at M = 32, 64, 128 for mid_ring and its candidates (bench/moe_grouped.py, no peers);
#           the grouped floor; bench/moe_block.py at 17, 24, 32, 48, 64, 128, into OUT/moe_h200.json,
#           OUT/moe_block_h200.json and OUT/moe_grouped_floor_h200.json
#   tune    the mid and large candidates (tactics/moe_grouped.hpp): SASS opcode counts of the
#           gate_up / down objects (OUT/sass.txt); clocks and power during the benchmarks
#           (OUT/clocks.csv); their bits against the ring forms; the grouped
#           stages, pairs and experts path at M = 32, 64, 128 (mid) and 256, 768 (mid, large) for
#           the dispatched configurations and the candidates; bench/moe_block.py at 32, 64, 128,
#           256, 768 with BUILD's libnetra (the dispatch), then with $CANDIDATES/libnetra.so (a
#           library built with the candidates dispatched) into OUT/moe_block_candidates_h200.json;
#           the dispatch path; $CANDIDATES/test_moe_block_gpu (built with that dispatch) from 17
#           tokens, about 210 s
#   trim    the mid range's Trim forms over 8 (tactics::grouped_mid_trim_rows8, dispatched) and 16
#           row tiles beside mid_dring: SASS opcode counts of their gate_up / down objects
#           (OUT/sass.txt), their bits
#           (test_moe_grouped_gpu's Trim case), the grouped stages, pairs and experts path at M = 32,
#           64, 128, then 96 and 256, in one process each (bench/moe_grouped.py, no peers) into
#           OUT/moe_h200.json, and compute-sanitizer memcheck on the Trim case of tiles of every size,
#           about 155 s
# usage: bench/moe_device.sh MODE BUILD OUT [BUDGET]
#   BUILD needs libnetra.so, the tests and drivers the mode runs (tests/test_moe_*_gpu,
#   tests/netra-bench-moe-{grouped,routing}, tests/moe-grouped-floor) and the sm90a MoE code
#   objects in code_objects/ (the tests' handles load them from there).
set -u
cd "$(dirname "$0")/.."
mode=$1
build=$2
out=$3
budget=${4:-290}
. bench/moe_device_step.sh
floor() {
  step bench.txt "$1" python3 bench/moe_grouped_floor.py --program "$build/tests/moe-grouped-floor" --out "$out/moe_grouped_floor_h200.json"
}
sass_counts() {  # sass_counts OPCODES OBJECT...: per grouped object, the counts of the SASS opcodes matching OPCODES
  local opcodes=$1 f sass
  shift
  sass=$(command -v cuobjdump || echo /usr/local/cuda/bin/cuobjdump)
  for f in "$@"; do
    echo "== moe-grouped-$f" >> "$out/sass.txt"
    timeout 10 "$sass" -sass "$build/code_objects/moe-grouped-$f.cubin" 2>&1 | grep -oE "($opcodes)[.A-Z0-9_]*" | sort | uniq -c >> "$out/sass.txt"
  done
}
case "$mode" in
  family)
    cp bench/results/moe_h200.json "$out/moe_h200.json"
    step tests.txt 100 "$build/tests/test_moe_block_gpu"
    step tests.txt 35 "$build/tests/test_moe_routing_gpu"
    step tests.txt 15 "$build/tests/test_moe_grouped_dispatch_gpu"
    step tests.txt 40 "$build/tests/test_moe_grouped_gpu" --test-case='*LDS ring*'
    floor 20
    step bench.txt 75 python3 bench/moe_block.py --out "$out/moe_h200.json" --grouped-floor "$out/moe_grouped_floor_h200.json" \
      --peer-max-tokens 64 --compile-tokens ""
    step bench.txt 35 python3 bench/moe_grouped.py --netra-bench "$build/tests/netra-bench-moe-grouped" --out "$out/moe_h200.json" \
      --compile-tokens "" --time-budget 5
    step bench.txt 25 python3 bench/moe_routing.py --netra-bench "$build/tests/netra-bench-moe-routing" --out "$out/moe_h200.json"
    ;;
  block)
    cp bench/results/moe_block_h200.json "$out/moe_block_h200.json"
    step tests.txt 60 "$build/tests/test_moe_block_gpu" --test-case-exclude='*257..768*'
    step tests.txt 15 "$build/tests/test_moe_grouped_dispatch_gpu"
    step bench.txt 120 python3 bench/moe_block.py --out "$out/moe_block_h200.json" --tokens 1,2,4,8,16,17,24,32,48,64,128,768 \
      --peer-max-tokens 32 --compile-tokens "" --layers 8
    ;;
  mid)
    cp bench/results/moe_h200.json "$out/moe_h200.json"
    cp bench/results/moe_block_h200.json "$out/moe_block_h200.json"
    step tests.txt 45 "$build/tests/test_moe_block_gpu" --test-case='*24 and 32*,*17..256*,*graph buckets*'
    step tests.txt 15 "$build/tests/test_moe_grouped_dispatch_gpu"
    step tests.txt 25 "$build/tests/test_moe_grouped_gpu" --test-case='*2-block ring*'
    step bench.txt 55 python3 bench/moe_grouped.py --netra-bench "$build/tests/netra-bench-moe-grouped" --out "$out/moe_h200.json" \
      --tokens 32,64,128 --configs mid_ring,mid_ring2,mid_dring --compile-tokens "" --time-budget 0
    floor 20
    step bench.txt 60 python3 bench/moe_block.py --out "$out/moe_block_h200.json" --grouped-floor "$out/moe_grouped_floor_h200.json" \
      --tokens 17,24,32,48,64,128 --peer-max-tokens 0 --compile-tokens "" --layers 8
    ;;
  tune)
    cp bench/results/moe_h200.json "$out/moe_h200.json"
    cp bench/results/moe_block_h200.json "$out/moe_block_h200.json"
    cp bench/results/moe_block_h200.json "$out/moe_block_candidates_h200.json"
    sass_counts "F2FP|HMMA|LDS|LDGSTS|LDG|FFMA|FMUL|SHFL|BAR" gate-up-sm90a-17-256-16-2 gate-up-sm90a-257-768-32-4 \
      gate-up-sm90a-257-768-16-2 down-sm90a-17-256-16-1-4 down-sm90a-17-256-16-1-4-4
    step tests.txt 40 "$build/tests/test_moe_grouped_gpu" --test-case='*2-block ring*'
    # SM / memory clocks and power every 100 ms while the benchmarks run (do the stages slow each other by clock?)
    nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw --format=csv -lms 100 > "$out/clocks.csv" 2>&1 &
    sampler=$!
    step bench.txt 50 python3 bench/moe_grouped.py --netra-bench "$build/tests/netra-bench-moe-grouped" --out "$out/moe_h200.json" \
      --tokens 32,64,128 --configs mid_ring2,mid_dring --compile-tokens "" --time-budget 0
    step bench.txt 35 python3 bench/moe_grouped.py --netra-bench "$build/tests/netra-bench-moe-grouped" --out "$out/moe_h200.json" \
      --tokens 256,768 --configs mid_ring2,mid_dring,large_ring,large_dring --compile-tokens "" --time-budget 0
    step bench.txt 25 python3 bench/moe_block.py --out "$out/moe_block_h200.json" --tokens 32,64,128,256,768 --peer-max-tokens 0 \
      --compile-tokens "" --layers 8
    (export NETRA_LIBRARY="$CANDIDATES/libnetra.so"; step bench.txt 25 python3 bench/moe_block.py --out "$out/moe_block_candidates_h200.json" \
      --tokens 32,64,128,256,768 --peer-max-tokens 0 --compile-tokens "" --layers 8)
    kill "$sampler" 2>/dev/null
    step tests.txt 12 "$build/tests/test_moe_grouped_dispatch_gpu"
    (export LD_LIBRARY_PATH="$CANDIDATES"; step tests.txt 25 "$CANDIDATES/test_moe_block_gpu" --test-case='*24 and 32*,*17..256*,*257..768*')
    ;;
  trim)
    cp bench/results/moe_h200.json "$out/moe_h200.json"
    sass_counts "F2FP|HMMA|LDS|LDGSTS|LDG|FFMA|FMUL|SHFL|BAR|BRA" gate-up-sm90a-17-256-16-2 gate-up-sm90a-17-256-16-2-1 \
      down-sm90a-17-256-16-1-4-4 down-sm90a-17-256-16-1-8-4-1
    step tests.txt 40 "$build/tests/test_moe_grouped_gpu" --test-case='*Trim*'
    nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw --format=csv -lms 100 > "$out/clocks.csv" 2>&1 &
    sampler=$!
    step bench.txt 70 python3 bench/moe_grouped.py --netra-bench "$build/tests/netra-bench-moe-grouped" --out "$out/moe_h200.json" \
      --tokens 32,64,128 --configs mid_dring,mid_trim_rows8,mid_trim_rows16 --compile-tokens "" --time-budget 0
    step bench.txt 35 python3 bench/moe_grouped.py --netra-bench "$build/tests/netra-bench-moe-grouped" --out "$out/moe_h200.json" \
      --tokens 96,256 --configs mid_dring,mid_trim_rows8,mid_trim_rows16 --compile-tokens "" --time-budget 0
    kill "$sampler" 2>/dev/null
    step tests.txt 30 compute-sanitizer --tool memcheck --error-exitcode 9 "$build/tests/test_moe_grouped_gpu" --test-case='*every size*'
    ;;
  *)
    echo "usage: bench/moe_device.sh family|block|mid|tune|trim BUILD OUT [BUDGET]" >&2
    exit 2
    ;;
esac
grep -h "rc=\|test cases\|assertions\|met\|MISSED\|ERROR" "$out/tests.txt" "$out/bench.txt" | tail -n 40
