// netra/dsl/float_ops.hpp — FP32 operations whose exact semantics differ between spellings, so
// kernels name the one they mean.
#pragma once
#include "netra/dsl/arch/target_ops.hpp"

namespace netra {
/// IEEE maxNum: the larger of a and b; if exactly one is NaN, the other; subnormals kept;
/// max(+0, -0) may be either zero. (max.f32 on sm90a, v_max_f32 on gfx950, std::fmax on hosts.)
template <class Target> NETRA_DEVICE float max_num(float a, float b) { return target_ops<Target>::max_num(a, b); }
}  // namespace netra
