#!/usr/bin/env bash
# Everything that needs the GPU, in one command: the GPU tests (ctest -L gpu, pytest) and the
# benchmarks, whose JSON goes to the results directory (family files <family>_h200.json, floors and other
# evidence under evidence/; bench/summarize.py turns them into docs/results.md and docs/plots/).
# usage: bench/device/run.sh [build-dir] [results-dir]   (results default: bench/results)
set -uo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
results=${2:-bench/results}
status=0
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
export NETRA_LIBRARY="$build/libnetra.so" PYTHONPATH="$PWD/python${PYTHONPATH:+:$PYTHONPATH}"
export NETRA_CACHE_DIR=${NETRA_CACHE_DIR:-/tmp/netra-cache}
step() { echo "== $*"; "$@" || { echo "!! FAILED: $*"; status=1; }; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv || true
step ctest --test-dir "$build" -L gpu -LE python --output-on-failure
gpu_tests=$((1 - status))   # the routing records' `correct` (bench/moe_routing.py --gpu-tests-passed)
mkdir -p "$results/evidence"
step python3 bench/norm_floor.py --program "$build/tests/norm-floor" --out "$results/evidence/norm_floor_h200.json"
step python3 bench/norm.py --netra-bench "$build/tests/netra-bench-norm" --floor "$results/evidence/norm_floor_h200.json" --out "$results/norm_h200.json"
step python3 -m pytest -q -rs tests/python
mkdir -p "$results/evidence"
step python3 bench/argmax.py --netra-bench "$build/tests/netra-bench-argmax" --read-floor "$build/tests/argmax-read-floor" --out "$results/argmax_h200.json"
step python3 bench/moe_routing.py --netra-bench "$build/tests/netra-bench-moe-routing" --copy-floor "$build/tests/act-quant-copy-floor" --gpu-tests-passed "$gpu_tests" --out "$results/moe_h200.json"
step python3 bench/moe_decode_structure_floor.py --program "$build/tests/moe-decode-structure-floor" --out "$results/evidence/moe_decode_structure_floor_h200.json"
step python3 bench/moe_grouped_floor.py --program "$build/tests/moe-grouped-floor" --out "$results/evidence/moe_grouped_floor_h200.json"
step python3 bench/moe_block.py --structure-floor "$results/evidence/moe_decode_structure_floor_h200.json" --grouped-floor "$results/evidence/moe_grouped_floor_h200.json" --out "$results/moe_h200.json"
step python3 bench/moe_grouped.py --netra-bench "$build/tests/netra-bench-moe-grouped" --out "$results/moe_h200.json"
step python3 bench/moe_block_timeline.py --out "$results/evidence/moe_block_timeline_h200.json"
step python3 bench/weight_read_rate.py --program "$build/tests/weight-read-rate" --out "$results/evidence/weight_read_rate_h200.json"
step python3 bench/fp8_accumulation.py --block-sum "$build/tests/fp8-block-sum" --matrix-rate "$build/tests/fp8-matrix-rate" --out "$results/evidence/fp8_accumulation_h200.json"
step python3 bench/attention.py --objects "$build/code_objects" --out "$results/attention_h200.json"
exit $status
