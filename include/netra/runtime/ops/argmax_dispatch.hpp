// netra/runtime/ops/argmax_dispatch.hpp — argmax through the tactic list: the tactics of
// tactics::argmax loaded for one device, and run() that takes the first tactic admitting the
// call or reports a fallback. run() allocates nothing, looks nothing up and never synchronises.
// Code using this header links libnetra.
#pragma once
#include "netra/runtime/ops/argmax.hpp"
#include "netra/runtime/tactic_set.hpp"
#include "netra/runtime/tactics/sampling.hpp"

namespace netra {

class argmax_dispatcher {
 public:
  argmax_dispatcher(const device_info& device, const jit::options& jit) : tactics_(device, jit) {}

  /// Records the call on `stream` with the first tactic that admits it and returns true;
  /// returns false when none does (the caller runs its own argmax). Throws
  /// status::invalid_argument when a strict tactic refuses a call inside its promoted domain.
  bool run(stream_handle stream, const float* logits, i64 rows, i64 cols, i64 row_stride, i64* out) const {
    const argmax_signature s = argmax_call_signature(tactics_.device().target, logits, rows, cols, row_stride, out);
    const int chosen = tactics_.select(s, bind_workspace);
    if (chosen == fallback) return false;
    tactics_.visit(chosen, [&](const auto& h) { argmax(h, stream, logits, rows, cols, row_stride, out); });
    return true;
  }

  explanation explain(const float* logits, i64 rows, i64 cols, i64 row_stride, const i64* out) const {
    return tactics_.explain(argmax_call_signature(tactics_.device().target, logits, rows, cols, row_stride, out), bind_workspace);
  }

  const tactic_set_of<decltype(tactics::argmax)>& tactics() const { return tactics_; }

 private:
  static constexpr auto bind_workspace = [](argmax_signature s, const auto& h) {
    s.workspace = h.workspace();
    s.workspace_bytes = h.workspace_bytes();
    return s;
  };
  tactic_set_of<decltype(tactics::argmax)> tactics_;
};

}  // namespace netra
