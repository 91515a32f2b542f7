#!/usr/bin/env bash
# Installs netra's build and test dependencies from Debian 12 when they are missing (needs root).
# CUDA 13 (nvcc, NVRTC, cuda.h) is expected in /usr/local/cuda; without it the sm_90a code objects
# and GPU tests are skipped with a visible message.
set -euo pipefail
packages=(cmake make g++ python3 clang-22 lld-22 llvm-22 libboost-dev doctest-dev libdlpack-dev libamdhip64-dev python3-matplotlib)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "install-deps: installing ${missing[*]}"
  if [[ $(id -u) -ne 0 ]]; then SUDO=sudo; else SUDO=; fi
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
if [[ ! -x /usr/local/cuda/bin/nvcc ]] && ! command -v nvcc >/dev/null; then
  echo "install-deps: WARNING: nvcc not found (CUDA 13 expected in /usr/local/cuda): sm_90a will be SKIPPED"
fi
