// netra/runtime/ops/argmax.hpp — the host launch path of contracts::argmax: validate the call's
// signature, then record stage one and stage two on the caller's stream using the handle's
// persistent workspace. Nothing is allocated, looked up or synchronised here.
#pragma once
#include "netra/kernels/sampling/argmax.hpp"
#include "netra/runtime/decision_text.hpp"
#include "netra/runtime/handle.hpp"

namespace netra {

template <class Contract>
argmax_signature make_argmax_signature(const handle<Contract>& h, const float* logits, i64 rows, i64 cols, i64 row_stride, i64* out) {
  argmax_signature s{};
  s.target = h.device().target;
  s.rows = rows;
  s.cols = cols;
  s.row_stride = row_stride;
  s.logits = logits;
  s.out = out;
  s.workspace = h.workspace();
  s.workspace_bytes = h.workspace_bytes();
  return s;
}

/// out[r] = torch.argmax(logits[r, :N]) for r < rows. Throws status::invalid_argument (nothing
/// launched, nothing written) when the contract refuses the call.
template <class Contract>
void argmax(const handle<Contract>& h, stream_handle stream, const float* logits, i64 rows, i64 cols, i64 row_stride, i64* out) {
  const decision d = Contract::admits(make_argmax_signature(h, logits, rows, cols, row_stride, out));
  if (!d.admitted()) throw error(status::invalid_argument, "netra::argmax: " + to_string(d));
  using stage_one = kernels::argmax_stage_one<Contract>;
  using stage_two = kernels::argmax_stage_two<Contract>;
  u64* keys = static_cast<u64*>(h.workspace());
  h.template launch<stage_one>(stream, {logits, row_stride, keys}, stage_one::shape(static_cast<u32>(rows)));
  h.template launch<stage_two>(stream, {keys, out}, stage_two::shape(static_cast<u32>(rows)));
}

}  // namespace netra
