// netra/dsl/arch/gfx942/ops.hpp — target_ops<gfx942> (MI300X, CDNA3, wave64): the common gfx9
// operations; BF16 and OCP E4M3 packing in software (gfx942 has no BF16 conversion instruction
// and its FP8 instruction writes FNUZ), so both give dsl/convert.hpp's reference bits by
// construction. The FNUZ packing on the instruction is dsl/fp8_pack.hpp's.
#pragma once
#include "netra/dsl/arch/amdgcn/ops.hpp"
#include "netra/dsl/arch/software_convert.hpp"

namespace netra {
template <> struct target_ops<gfx942> : amdgcn_ops<gfx942>, software_convert_ops {};
}  // namespace netra
