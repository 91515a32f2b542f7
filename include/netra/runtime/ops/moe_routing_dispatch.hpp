// netra/runtime/ops/moe_routing_dispatch.hpp — the MoE routing operations on the one dispatch path
// (runtime/op_dispatcher.hpp): act_quant, the router and the shared-expert gate, each with its
// tensors, its tactic list (tactics/moe_routing.hpp), the resources it binds and its launch.
// run() of each allocates nothing, looks nothing up and never synchronises. Code using this
// header links libnetra.
#pragma once
#include <array>

#include "netra/runtime/op_dispatcher.hpp"
#include "netra/runtime/ops/moe_act_quant.hpp"
#include "netra/runtime/ops/moe_router.hpp"
#include "netra/runtime/ops/moe_shared_gate.hpp"
#include "netra/runtime/tactics/moe_routing.hpp"

namespace netra {

/// act_quant of rows [gate | up] (BF16) into E4M3 + FP32 scales.
struct moe_act_quant_op : binds_nothing {
  using signature = moe_act_quant_signature;
  static constexpr auto tactics = netra::tactics::moe_act_quant;
  static constexpr const char* name = "moe_act_quant";
  static constexpr std::array<const char*, 3> tensor_names{"in", "out", "scales"};
  static signature signature_of(const device_info& d, const tensor_arg& in, const tensor_arg& out, const tensor_arg& scales) {
    return moe_act_quant_call_signature(d, in, out, scales);
  }
  template <class C> static void launch(const handle<C>& h, stream_handle stream, const signature& s) { launch_moe_act_quant(h, stream, s); }
};

/// The router's launch and workspace, shared by its lists (slots 0..7; the block's: all nine).
struct moe_router_launch : binds_workspace {
  using signature = moe_router_signature;
  template <class C> static void launch(const handle<C>& h, stream_handle stream, const signature& s) { launch_moe_router(h, stream, s); }
};

/// Route slots 0..7 (the chosen tactic's workspace bound to the call).
struct moe_router_op : moe_router_launch {
  static constexpr auto tactics = netra::tactics::moe_router;
  static constexpr const char* name = "moe_router";
  static constexpr std::array<const char*, 4> tensor_names{"hidden", "gate_weight", "ids", "weights"};
  static signature signature_of(const device_info& d, const tensor_arg& hidden, const tensor_arg& gate_weight, const tensor_arg& ids,
                                const tensor_arg& weights) {
    return moe_router_call_signature(d, hidden, gate_weight, ids, weights);
  }
};

/// The decode block's router: slots 0..7 and the shared gate's slot 8 in one call.
struct moe_block_router_op : moe_router_launch {
  static constexpr auto tactics = netra::tactics::moe_block_router;
  static constexpr const char* name = "moe_block router";
  static constexpr std::array<const char*, 5> tensor_names{"hidden", "router_weight", "shared_gate_weight", "ids", "route_weights"};
  static signature signature_of(const device_info& d, const tensor_arg& hidden, const tensor_arg& gate_weight, const tensor_arg& shared_gate_weight,
                                const tensor_arg& ids, const tensor_arg& weights) {
    return moe_router_call_signature(d, hidden, gate_weight, ids, weights, shared_gate_weight);
  }
};

/// Route slot 8 (id 256, sigmoid gate).
struct moe_shared_gate_op : binds_nothing {
  using signature = moe_shared_gate_signature;
  static constexpr auto tactics = netra::tactics::moe_shared_gate;
  static constexpr const char* name = "moe_shared_gate";
  static constexpr std::array<const char*, 4> tensor_names{"hidden", "gate_weight", "ids", "weights"};
  static signature signature_of(const device_info& d, const tensor_arg& hidden, const tensor_arg& gate_weight, const tensor_arg& ids,
                                const tensor_arg& weights) {
    return moe_shared_gate_call_signature(d, hidden, gate_weight, ids, weights);
  }
  template <class C> static void launch(const handle<C>& h, stream_handle stream, const signature& s) { launch_moe_shared_gate(h, stream, s); }
};

/// The routing stage's operations loaded for one device (one C handle: netra/c/moe_routing.h).
struct moe_routing_dispatcher {
  moe_routing_dispatcher(const device_info& device, const jit::options& jit) : act_quant(device, jit), router(device, jit), shared_gate(device, jit) {}
  op_dispatcher<moe_act_quant_op> act_quant;
  op_dispatcher<moe_router_op> router;
  op_dispatcher<moe_shared_gate_op> shared_gate;
};

}  // namespace netra
