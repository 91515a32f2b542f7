// netra/runtime/ops/argmax_dispatch.hpp — argmax as an operation of the one dispatch path
// (runtime/op_dispatcher.hpp): its tensors, its tactics (tactics::argmax), the workspace each
// tactic binds and its launch. argmax_dispatcher::run() allocates nothing, looks nothing up and
// never synchronises. Code using this header links libnetra.
#pragma once
#include <array>

#include "netra/runtime/op_dispatcher.hpp"
#include "netra/runtime/ops/argmax.hpp"
#include "netra/runtime/tactics/sampling.hpp"

namespace netra {

struct argmax_op : binds_workspace {
  using signature = argmax_signature;
  static constexpr auto tactics = netra::tactics::argmax;
  static constexpr const char* name = "argmax";
  static constexpr std::array<const char*, 2> tensor_names{"logits", "out"};
  static signature signature_of(const device_info& device, const tensor_arg& logits, const tensor_arg& out) {
    return argmax_call_signature(device, logits, out);
  }
  template <class Contract> static void launch(const handle<Contract>& h, stream_handle stream, const signature& s) {
    launch_argmax(h, stream, s);
  }
};

using argmax_dispatcher = op_dispatcher<argmax_op>;

}  // namespace netra
