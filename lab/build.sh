#!/usr/bin/env bash
# Builds libnetra.so of a measured variant: the tree at REVISION with PATCH applied (and, for the
# synthetic-units patch, NETRA_SCRATCH_GU set to VALUE), into OUTDIR/libnetra.so. Run it on the
# build machine, carry OUTDIR to the GPU and time it there with the decode block benchmark:
#   NETRA_LIBRARY=OUTDIR/libnetra.so python3 bench/moe_block.py --tokens 1,4,16 --compile-tokens "" --out FILE.json
# then lab/collect.py NAME=FILE.json ... > lab/moe/data/moe_expert_variants_h200.json.
# The variants are timing probes (several compute wrong values on purpose); none is shipped.
# usage: lab/build.sh REVISION PATCH OUTDIR [VALUE]
set -euo pipefail
revision=$1 patch=$(realpath "$2") out=$(realpath -m "$3") value=${4:-}
root=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
tree=$(mktemp -d) build=$(mktemp -d)
trap 'git -C "$root" worktree remove --force "$tree"; rm -rf "$build"' EXIT
git -C "$root" worktree add -q --detach "$tree" "$revision"
git -C "$tree" apply "$patch"
if [ -n "$value" ]; then
  sed -i "s/^#define NETRA_SCRATCH_GU [0-9]*/#define NETRA_SCRATCH_GU $value/" "$tree/include/netra/kernels/moe/experts_gate_up.hpp"
fi
cmake -S "$tree" -B "$build" -DCMAKE_BUILD_TYPE=Release -DNETRA_BUILD_TESTS=OFF > /dev/null
cmake --build "$build" -j"$(nproc)" --target netra_runtime > /dev/null
mkdir -p "$out"
cp "$build/libnetra.so" "$out/"
echo "$out/libnetra.so"
