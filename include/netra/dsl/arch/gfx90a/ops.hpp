// netra/dsl/arch/gfx90a/ops.hpp — target_ops<gfx90a>: the common gfx9 operations only.
// gfx90a (MI200) has no FP8 and no BF16 conversion instruction; it exists in netra so that
// CI can exercise real hipRTC calls (Debian's hipRTC 5.2 compiles gfx90a, not gfx942/gfx950).
#pragma once
#include "netra/dsl/arch/amdgcn/ops.hpp"

namespace netra {
template <> struct target_ops<gfx90a> : amdgcn_ops<gfx90a> {};
}  // namespace netra
