// netra/runtime/ops/moe_experts_dispatch.hpp — the decode expert projections on the one dispatch
// path (runtime/op_dispatcher.hpp): gate_up and down, each with its tensors, its tactic list
// (tactics/moe_experts.hpp), the resources it binds and its launch. run() of each allocates
// nothing, looks nothing up and never synchronises. Code using this header links libnetra.
#pragma once
#include <array>

#include "netra/runtime/op_dispatcher.hpp"
#include "netra/runtime/ops/moe_experts.hpp"
#include "netra/runtime/tactics/moe_experts.hpp"

namespace netra {

/// gate_up (the chosen tactic's workspace bound: unit_list's list, resident's counters).
struct moe_gate_up_op : binds_workspace {
  using signature = moe_gate_up_signature;
  static constexpr auto tactics = netra::tactics::moe_expert_gate_up;
  static constexpr const char* name = "moe_expert_gate_up";
  static constexpr std::array<const char*, 5> tensor_names{"hidden", "ids", "w13", "s13", "out"};
  static signature signature_of(const device_info& d, const tensor_arg& hidden, const tensor_arg& ids, const tensor_arg& w13, const tensor_arg& s13,
                                const tensor_arg& out) {
    return moe_gate_up_call_signature(d, hidden, ids, w13, s13, out);
  }
  template <class C> static void launch(const handle<C>& h, stream_handle stream, const signature& s) {
    launch_moe_expert_gate_up(h, stream, s);
  }
};

/// down with the weighted route sum: act_quant's E4M3 act + scales, or gate_up's BF16 output
/// (act_quant fused; the act's element type picks the tactic).
struct moe_down_op : binds_nothing {
  using signature = moe_down_signature;
  static constexpr auto tactics = netra::tactics::moe_expert_down;
  static constexpr const char* name = "moe_expert_down";
  static constexpr std::array<const char*, 7> tensor_names{"act", "act_scales", "ids", "route_weights", "w2", "s2", "out"};
  static signature signature_of(const device_info& d, const tensor_arg& act, const tensor_arg& act_scales, const tensor_arg& ids,
                                const tensor_arg& route_weights, const tensor_arg& w2, const tensor_arg& s2, const tensor_arg& out) {
    return moe_down_call_signature(d, act, act_scales, ids, route_weights, w2, s2, out);
  }
  template <class C> static void launch(const handle<C>& h, stream_handle stream, const signature& s) { launch_moe_expert_down(h, stream, s); }
};

/// The expert projections loaded for one device (one C handle: netra/c/moe_experts.h).
struct moe_experts_dispatcher {
  moe_experts_dispatcher(const device_info& device, const jit::options& jit) : gate_up(device, jit), down(device, jit) {}
  op_dispatcher<moe_gate_up_op> gate_up;
  op_dispatcher<moe_down_op> down;
};

}  // namespace netra
