#!/usr/bin/env bash
# The main job: install what is missing, build, audit every catalogued contract on every target
# (resources vs. budget); on a machine with an NVIDIA GPU, also validate the kernels on the GPU and
# run the benchmarks (bench/device/run.sh). Run it as yourself or as root, not under sudo:
# scripts/install-deps.sh escalates (sudo) only for the apt step, and only when packages are
# missing and you are not root, so the build directory stays yours for scripts/test.sh.
# CI (.ci/run) takes the same first step, install-deps.sh, then scripts/test.sh (the same build/).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j"$(nproc)"
cmake --build build --target audit
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
  bench/device/run.sh build
else
  echo "run.sh: no NVIDIA GPU on this machine: GPU validation and benchmarks SKIPPED"
fi
