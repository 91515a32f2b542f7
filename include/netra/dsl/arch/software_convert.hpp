// netra/dsl/arch/software_convert.hpp — BF16 and OCP E4M3 packing written on the bits (the
// reference functions of dsl/convert.hpp compiled for the device): the conversions of targets
// without an instruction of netra's semantics (gfx942: no BF16 instruction, FP8 only as FNUZ;
// gfx1151: neither). The same bits as the host by construction.
#pragma once
#include "netra/dsl/convert.hpp"  // the references (convert.hpp defines them before it includes target_ops.hpp)

namespace netra {
struct software_convert_ops {
  /// Two E4M3FN values, `lo` in bits 0..7 and `hi` in bits 8..15.
  static NETRA_DEVICE u32 pack_e4m3x2(float lo, float hi) {
    return static_cast<u32>(fp8_from_f32_reference<fp8::e4m3fn>(lo)) | (static_cast<u32>(fp8_from_f32_reference<fp8::e4m3fn>(hi)) << 8);
  }
  /// Two BF16 values, `lo` in bits 0..15, `hi` in bits 16..31: RNE, NaN -> 0x7FFF.
  static NETRA_DEVICE u32 pack_bf16x2(float lo, float hi) {
    return static_cast<u32>(bf16_from_f32_reference(lo)) | (static_cast<u32>(bf16_from_f32_reference(hi)) << 16);
  }
};
}  // namespace netra
