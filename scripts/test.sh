#!/usr/bin/env bash
# Builds (configuring first if needed) and runs the test suite; ctest prints the summary.
# GPU tests report "Skipped" on machines without a GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
[[ -f build/CMakeCache.txt ]] || cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j"$(nproc)"
ctest --test-dir build --output-on-failure -j"$(nproc)"
