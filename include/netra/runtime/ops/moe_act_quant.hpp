// netra/runtime/ops/moe_act_quant.hpp — the host launch path of contracts::moe_act_quant: the
// signature of a call from its tensors (or raw pointers), the launch of an admitted signature
// (one kernel on the caller's stream, nothing checked again), and the checked C++ entry point.
// Nothing is allocated, looked up or synchronised here (safe inside graph capture).
#pragma once
#include "netra/kernels/moe/act_quant.hpp"
#include "netra/runtime/decision_text.hpp"
#include "netra/runtime/handle.hpp"
#include "netra/runtime/tensor.hpp"

namespace netra {

inline moe_act_quant_signature moe_act_quant_call_signature(const device_info& device, const tensor_arg& in, const tensor_arg& out,
                                                            const tensor_arg& scales) {
  return {device.target, device_of(device), in, out, scales};
}

/// The same from raw pointers on device `on`: in BF16 row r at in + r * row_stride, out E4M3
/// [rows, 512], scales FP32 [rows, 4].
inline moe_act_quant_signature moe_act_quant_call_signature(target_id target, device_ref on, const void* in, i64 rows, i64 cols, i64 row_stride,
                                                            const void* out, const float* scales) {
  return {target, on, strided_tensor(in, dtype::bf16, on, {rows, cols}, {row_stride, 1}), strided_tensor(out, dtype::e4m3, on, {rows, 512}),
          strided_tensor(scales, dtype::f32, on, {rows, 4})};
}

/// Records the kernel of a call Contract::admits(s) admitted.
template <class Contract> void launch_moe_act_quant(const handle<Contract>& h, stream_handle stream, const moe_act_quant_signature& s) {
  using kernel = kernels::moe_act_quant_kernel<Contract>;
  const auto rows = static_cast<u32>(s.rows());
  h.template launch<kernel>(stream,
                            {static_cast<const u16*>(s.in.data), s.row_stride(), static_cast<u8*>(const_cast<void*>(s.out.data)),
                             static_cast<float*>(const_cast<void*>(s.scales.data)), rows},
                            kernel::shape(rows));
}

/// out[r, :] (E4M3, 512 bytes), scales[r, :] (4 FP32) = act_quant(in[r, :1024]) for r < rows.
/// `in` is BF16 [rows, row_stride]. Throws status::invalid_argument (nothing launched, nothing
/// written) when the contract refuses the call.
template <class Contract>
void moe_act_quant(const handle<Contract>& h, stream_handle stream, const void* in, i64 rows, i64 cols, i64 row_stride, void* out,
                   float* scales) {
  const auto s = moe_act_quant_call_signature(h.device().target, device_of(h.device()), in, rows, cols, row_stride, out, scales);
  require_admitted<Contract>("netra::moe_act_quant", s);
  launch_moe_act_quant(h, stream, s);
}

}  // namespace netra
