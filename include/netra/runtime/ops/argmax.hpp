// netra/runtime/ops/argmax.hpp — the host launch path of contracts::argmax: the signature of a
// call from its tensors, the launch of a signature a contract admitted (both stages, on the
// caller's stream, with the workspace bound in it), and the checked C++ entry points that take
// raw pointers (they admit, then launch). Nothing is allocated, looked up or synchronised here.
#pragma once
#include "netra/kernels/sampling/argmax.hpp"
#include "netra/runtime/decision_text.hpp"
#include "netra/runtime/handle.hpp"
#include "netra/runtime/tensor.hpp"

namespace netra {

/// The signature of an argmax call on `device`: logits float32 [rows, cols] (rows contiguous),
/// out int64 [rows], a keys workspace of `workspace_bytes` bytes.
inline argmax_signature argmax_call_signature(const device_info& device, const tensor_arg& logits, const tensor_arg& out,
                                              const void* workspace = nullptr, u64 workspace_bytes = 0) {
  argmax_signature s{};
  s.target = device.target;
  s.device = device_of(device);
  s.logits = logits;
  s.out = out;
  s.workspace = workspace;
  s.workspace_bytes = workspace_bytes;
  return s;
}

/// The same from raw pointers on device `on`: logits row r at logits + r * row_stride, out [rows].
inline argmax_signature argmax_call_signature(target_id target, device_ref on, const float* logits, i64 rows, i64 cols, i64 row_stride,
                                              const i64* out, const void* workspace = nullptr, u64 workspace_bytes = 0) {
  argmax_signature s{};
  s.target = target;
  s.device = on;
  s.logits = strided_tensor(logits, dtype::f32, on, {rows, cols}, {row_stride, 1});
  s.out = strided_tensor(out, dtype::i64, on, {rows});
  s.workspace = workspace;
  s.workspace_bytes = workspace_bytes;
  return s;
}

/// Records both stages of a call Contract::admits(s) admitted (nothing is checked here).
template <class Contract> void launch_argmax(const handle<Contract>& h, stream_handle stream, const argmax_signature& s) {
  using stage_one = kernels::argmax_stage_one<Contract>;
  using stage_two = kernels::argmax_stage_two<Contract>;
  u64* keys = static_cast<u64*>(const_cast<void*>(s.workspace));
  const u32 rows = static_cast<u32>(s.rows());
  h.template launch<stage_one>(stream, {static_cast<const float*>(s.logits.data), s.row_stride(), keys}, stage_one::shape(rows));
  h.template launch<stage_two>(stream, {keys, static_cast<i64*>(const_cast<void*>(s.out.data))}, stage_two::shape(rows));
}

/// out[r] = torch.argmax(logits[r, :N]) for r < rows (logits on the handle's device, row r at
/// logits + r * row_stride), with the caller's `workspace` (16-byte aligned,
/// Contract::workspace_bytes bytes; one stream at a time). Throws status::workspace_too_small or
/// status::invalid_argument (nothing launched, nothing written) when the contract refuses the call.
template <class Contract>
void argmax(const handle<Contract>& h, stream_handle stream, const float* logits, i64 rows, i64 cols, i64 row_stride, i64* out,
            void* workspace, u64 workspace_bytes) {
  const argmax_signature s =
      argmax_call_signature(h.device().target, device_of(h.device()), logits, rows, cols, row_stride, out, workspace, workspace_bytes);
  require_admitted<Contract>("netra::argmax", s);
  launch_argmax(h, stream, s);
}

/// The same with the handle's persistent workspace.
template <class Contract>
void argmax(const handle<Contract>& h, stream_handle stream, const float* logits, i64 rows, i64 cols, i64 row_stride, i64* out) {
  argmax(h, stream, logits, rows, cols, row_stride, out, h.workspace(), h.workspace_bytes());
}

}  // namespace netra
