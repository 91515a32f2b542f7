// netra/runtime/ops/argmax.hpp — the host launch path of contracts::argmax: validate the call's
// signature, then record the one argmax launch (both stages) on the caller's stream with the
// handle's persistent workspace (or one the caller passes). Nothing is allocated, looked up or
// synchronised here.
#pragma once
#include "netra/kernels/sampling/argmax.hpp"
#include "netra/runtime/decision_text.hpp"
#include "netra/runtime/handle.hpp"

namespace netra {

/// The signature of an argmax call on a `target` device: FP32 logits [rows, cols] with a row
/// stride in elements, int64 out [rows], keys workspace of `workspace_bytes` bytes.
inline argmax_signature argmax_call_signature(target_id target, const float* logits, i64 rows, i64 cols, i64 row_stride, const i64* out,
                                              const void* workspace = nullptr, u64 workspace_bytes = 0) {
  argmax_signature s{};
  s.target = target;
  s.rows = rows;
  s.cols = cols;
  s.row_stride = row_stride;
  s.logits = logits;
  s.out = out;
  s.workspace = workspace;
  s.workspace_bytes = workspace_bytes;
  return s;
}

template <class Contract>
argmax_signature make_argmax_signature(const handle<Contract>& h, const float* logits, i64 rows, i64 cols, i64 row_stride, i64* out) {
  return argmax_call_signature(h.device().target, logits, rows, cols, row_stride, out, h.workspace(), h.workspace_bytes());
}

/// out[r] = torch.argmax(logits[r, :N]) for r < rows, with the caller's `workspace` (16-byte
/// aligned, Contract::workspace_bytes bytes; one stream at a time). Throws status::workspace_too_small or status::invalid_argument (nothing
/// launched, nothing written) when the contract refuses the call.
template <class Contract>
void argmax(const handle<Contract>& h, stream_handle stream, const float* logits, i64 rows, i64 cols, i64 row_stride, i64* out,
            void* workspace, u64 workspace_bytes) {
  const decision d = Contract::admits(argmax_call_signature(h.device().target, logits, rows, cols, row_stride, out, workspace, workspace_bytes));
  if (!d.admitted()) throw error(refusal_status(d), "netra::argmax: " + to_string(d));
  using stage_one = kernels::argmax_stage_one<Contract>;
  using stage_two = kernels::argmax_stage_two<Contract>;
  u64* keys = static_cast<u64*>(workspace);
  h.template launch<stage_one>(stream, {logits, row_stride, keys}, stage_one::shape(static_cast<u32>(rows)));
  h.template launch<stage_two>(stream, {keys, out}, stage_two::shape(static_cast<u32>(rows)));
}

/// The same with the handle's persistent workspace.
template <class Contract>
void argmax(const handle<Contract>& h, stream_handle stream, const float* logits, i64 rows, i64 cols, i64 row_stride, i64* out) {
  argmax(h, stream, logits, rows, cols, row_stride, out, h.workspace(), h.workspace_bytes());
}

}  // namespace netra
