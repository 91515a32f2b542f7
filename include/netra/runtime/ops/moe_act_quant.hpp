// netra/runtime/ops/moe_act_quant.hpp — the host launch path of contracts::moe_act_quant:
// validate the call's signature, then record the one kernel on the caller's stream. Nothing is
// allocated, looked up or synchronised here (safe inside graph capture).
#pragma once
#include "netra/kernels/moe/act_quant.hpp"
#include "netra/runtime/decision_text.hpp"
#include "netra/runtime/handle.hpp"

namespace netra {

inline moe_act_quant_signature moe_act_quant_call_signature(target_id target, const void* in, i64 rows, i64 cols, i64 row_stride,
                                                            const void* out, const float* scales) {
  moe_act_quant_signature s{};
  s.target = target;
  s.rows = rows;
  s.cols = cols;
  s.row_stride = row_stride;
  s.in = in;
  s.out = out;
  s.scales = scales;
  return s;
}

/// out[r, :] (E4M3, 512 bytes), scales[r, :] (4 FP32) = act_quant(in[r, :1024]) for r < rows.
/// `in` is BF16 [rows, row_stride]. Throws status::invalid_argument (nothing launched, nothing
/// written) when the contract refuses the call.
template <class Contract>
void moe_act_quant(const handle<Contract>& h, stream_handle stream, const void* in, i64 rows, i64 cols, i64 row_stride, void* out,
                   float* scales) {
  const decision d = Contract::admits(moe_act_quant_call_signature(h.device().target, in, rows, cols, row_stride, out, scales));
  if (!d.admitted()) throw error(refusal_status(d), "netra::moe_act_quant: " + to_string(d));
  using kernel = kernels::moe_act_quant_kernel<Contract>;
  h.template launch<kernel>(stream, {static_cast<const u16*>(in), row_stride, static_cast<u8*>(out), scales, static_cast<u32>(rows)},
                            kernel::shape(static_cast<u32>(rows)));
}

}  // namespace netra
