// netra/runtime/ops/moe_grouped.hpp — the host launch paths of the grouped expert contracts
// (plan, gate_up with act_quant fused, down per route, the weighted route sum) and
// moe_grouped_experts<Target>: the experts of the MoE block for 17 .. 768 tokens through one path
// (tactics/moe_grouped.hpp picks the configuration by M). Each launch builds its signature's
// tensors from the raw pointers (the model's sizes) and validates it first (a refused call throws status::invalid_argument before anything is recorded); nothing is
// allocated, looked up or synchronised here (safe inside graph capture). On sm90a every kernel is
// recorded with programmatic dependent launch.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "netra/kernels/moe/grouped_gate_up.hpp"
#include "netra/kernels/moe/grouped_plan.hpp"
#include "netra/kernels/moe/split_k_down.hpp"
#include "netra/runtime/decision_text.hpp"
#include "netra/runtime/handle.hpp"
#include "netra/runtime/instance.hpp"
#include "netra/runtime/tensor.hpp"
#include "netra/runtime/ops/moe_experts.hpp"
#include "netra/runtime/tactics/moe_grouped.hpp"

namespace netra {

namespace detail {
inline void require(const decision& d, const char* op) {
  if (!d.admitted()) throw error(refusal_status(d), std::string("netra::") + op + ": " + to_string(d));
}
/// The fields of a stage after the plan from raw pointers (the model's sizes for `tokens`).
template <class Contract, class Signature>
Signature grouped_stage(const device_info& device, const void* plan, u64 plan_bytes, const void* act, const float* act_scales, i64 tokens) {
  const device_ref on = device_of(device);
  const i64 routes = moe::route_layout::slots * tokens;
  Signature s{};
  s.target = device.target;
  s.device = on;
  s.tokens = tokens;
  s.plan_tile = Contract::tile;
  s.plan = plan;
  s.plan_bytes = plan_bytes;
  s.act = strided_tensor(act, dtype::e4m3, on, {routes, moe::expert_weights::intermediate});
  s.act_scales = strided_tensor(act_scales, dtype::f32, on, {routes, moe::expert_weights::w2_scale_cols});
  return s;
}
inline tensor_arg expert_tensor(const void* data, dtype type, device_ref on, i64 rows, i64 cols) {
  return strided_tensor(data, type, on, {moe::expert_weights::experts, rows, cols});
}
}  // namespace detail

/// Records the kernel of a call Contract::admits(s) admitted (each stage: nothing checked again).
template <class Contract> void launch_moe_grouped_plan(const handle<Contract>& h, stream_handle stream, const moe_grouped_plan_signature& s) {
  using kernel = kernels::moe_grouped_plan_kernel<Contract>;
  const auto m = static_cast<u32>(s.tokens());
  h.template launch<kernel>(stream, {static_cast<const u16*>(s.hidden.data), static_cast<const i32*>(s.ids.data), static_cast<u8*>(const_cast<void*>(s.plan)), m},
                            kernel::shape(m));
}
template <class Contract> void launch_moe_grouped_gate_up(const handle<Contract>& h, stream_handle stream, const moe_grouped_gate_up_signature& s) {
  using kernel = kernels::moe_grouped_gate_up_kernel<Contract>;
  const auto m = static_cast<u32>(s.tokens);
  h.template launch<kernel>(stream,
                            {static_cast<const u8*>(s.plan), static_cast<const u8*>(s.w13.data), static_cast<const float*>(s.s13.data),
                             static_cast<u8*>(const_cast<void*>(s.act.data)), static_cast<float*>(const_cast<void*>(s.act_scales.data)),
                             s.gate_up.rank < 0 ? nullptr : static_cast<u16*>(const_cast<void*>(s.gate_up.data)), m},
                            kernel::shape(m));
}
template <class Contract> void launch_moe_grouped_down(const handle<Contract>& h, stream_handle stream, const moe_grouped_down_signature& s) {
  using kernel = kernels::moe_grouped_down_kernel<Contract>;
  const auto m = static_cast<u32>(s.tokens);
  h.template launch<kernel>(stream,
                            {static_cast<const u8*>(s.plan), static_cast<const u8*>(s.act.data), static_cast<const float*>(s.act_scales.data),
                             static_cast<const u8*>(s.w2.data), static_cast<const float*>(s.s2.data), const_cast<void*>(s.partials), m},
                            kernel::shape(m));
}
template <class Contract> void launch_moe_grouped_reduce(const handle<Contract>& h, stream_handle stream, const moe_grouped_reduce_signature& s) {
  using kernel = kernels::moe_grouped_reduce_kernel<Contract>;
  const auto m = static_cast<u32>(s.tokens());
  h.template launch<kernel>(stream,
                            {s.partials, static_cast<const i32*>(s.ids.data), static_cast<const float*>(s.route_weights.data),
                             static_cast<u16*>(const_cast<void*>(s.out.data)), m},
                            kernel::shape(m));
}

/// plan (grouped_plan_layout, caller-owned, plan_bytes long) from hidden BF16 [M, 2048] and ids [M, 9].
template <class Contract>
void moe_grouped_plan(const handle<Contract>& h, stream_handle stream, const void* hidden, const i32* ids, void* plan, u64 plan_bytes, i64 tokens) {
  const device_ref on = device_of(h.device());
  const moe_grouped_plan_signature s{h.device().target, on, strided_tensor(hidden, dtype::bf16, on, {tokens, moe::expert_weights::hidden}),
                                     strided_tensor(ids, dtype::i32, on, {tokens, moe::route_layout::slots}), plan, plan_bytes};
  detail::require(Contract::admits(s), "moe_grouped_plan");
  launch_moe_grouped_plan(h, stream, s);
}

/// act E4M3 [9M, 512] + act_scales FP32 [9M, 4] (and, when gate_up is non-null, BF16 [9M, 1024]).
template <class Contract>
void moe_grouped_gate_up(const handle<Contract>& h, stream_handle stream, const void* plan, u64 plan_bytes, const moe_expert_weights& w, void* act,
                         float* act_scales, void* gate_up, i64 tokens) {
  using W = moe::expert_weights;
  auto s = detail::grouped_stage<Contract, moe_grouped_gate_up_signature>(h.device(), plan, plan_bytes, act, act_scales, tokens);
  s.w13 = detail::expert_tensor(w.w13, dtype::e4m3, s.device, W::gate_up_rows, W::hidden);
  s.s13 = detail::expert_tensor(w.s13, dtype::f32, s.device, W::w13_scale_rows, W::w13_scale_cols);
  if (gate_up != nullptr) s.gate_up = strided_tensor(gate_up, dtype::bf16, s.device, {moe::route_layout::slots * tokens, W::gate_up_rows});
  detail::require(Contract::admits(s), "moe_grouped_gate_up");
  launch_moe_grouped_gate_up(h, stream, s);
}

/// partials (caller-owned, Contract::partials_bytes): y or the two FP16 K partials of every route.
template <class Contract>
void moe_grouped_down(const handle<Contract>& h, stream_handle stream, const void* plan, u64 plan_bytes, const void* act, const float* act_scales,
                      const moe_expert_weights& w, void* partials, u64 partials_bytes, i64 tokens) {
  using W = moe::expert_weights;
  auto s = detail::grouped_stage<Contract, moe_grouped_down_signature>(h.device(), plan, plan_bytes, act, act_scales, tokens);
  s.w2 = detail::expert_tensor(w.w2, dtype::e4m3, s.device, W::hidden, W::intermediate);
  s.s2 = detail::expert_tensor(w.s2, dtype::f32, s.device, W::w2_scale_rows, W::w2_scale_cols);
  s.partials = partials;
  s.partials_bytes = partials_bytes;
  detail::require(Contract::admits(s), "moe_grouped_down");
  launch_moe_grouped_down(h, stream, s);
}

/// out BF16 [M, 2048] = the weighted sum of the 9 routes' partials, slot order.
template <class Contract>
void moe_grouped_reduce(const handle<Contract>& h, stream_handle stream, const void* partials, u64 partials_bytes, const i32* ids,
                        const float* route_weights, void* out, i64 tokens) {
  const device_ref on = device_of(h.device());
  const i64 slots = moe::route_layout::slots;
  const moe_grouped_reduce_signature s{h.device().target,
                                       on,
                                       partials,
                                       partials_bytes,
                                       strided_tensor(ids, dtype::i32, on, {tokens, slots}),
                                       strided_tensor(route_weights, dtype::f32, on, {tokens, slots}),
                                       strided_tensor(out, dtype::bf16, on, {tokens, moe::expert_weights::hidden})};
  detail::require(Contract::admits(s), "moe_grouped_reduce");
  launch_moe_grouped_reduce(h, stream, s);
}

/// Device pointers of one grouped experts call (the block after routing). The caller owns every
/// buffer (stable across graph replays); sizes from moe_grouped_experts::buffer_bytes.
struct moe_grouped_args {
  const void* hidden = nullptr;       // BF16 [M, 2048]
  const i32* ids = nullptr;           // int32 [M, 9] (route metadata as the router / shared gate wrote it)
  const float* route_weights = nullptr;  // FP32 [M, 9]
  moe_expert_weights experts;
  void* plan = nullptr;               // plan_bytes
  void* act = nullptr;                // E4M3 [9M, 512]
  float* act_scales = nullptr;        // FP32 [9M, 4]
  void* partials = nullptr;           // partials_bytes
  void* out = nullptr;                // BF16 [M, 2048]
  void* gate_up = nullptr;            // optional BF16 [9M, 1024]
  i64 tokens = 0;
};

/// The grouped experts of one target: every configuration of tactics::grouped_configs<Target>
/// loaded; run() records plan -> gate_up -> down -> reduce of the first configuration whose
/// token range holds M (four launches).
template <class Target> class moe_grouped_experts {
 public:
  using loader = std::function<std::vector<std::byte>(const std::string&)>;
  static constexpr i64 min_tokens = tactics::grouped_min_tokens, max_tokens = tactics::grouped_max_tokens;

  moe_grouped_experts(const device_info& device, const loader& code_object) : configs_(load(device, code_object)) {}

  /// Bytes the caller's plan and partials buffers need for every M this object admits.
  static constexpr u64 plan_bytes = moe::grouped_plan_layout<768, contracts::split_k_tile<Target>>::bytes;
  static constexpr u64 partials_bytes = contracts::moe_grouped_reduce<Target, 257, 768, 1>::partials_bytes;
  static_assert(boost::hana::all_of(tactics::grouped_configs<Target>,
                                    [](auto c) {
                                      using config = typename decltype(c)::type;
                                      return boost::hana::bool_c<(config::plan::layout::bytes <= plan_bytes && config::down::partials_bytes <= partials_bytes)>;
                                    }),
                "netra::moe_grouped_experts: plan_bytes and partials_bytes cover every configuration");

  void run(stream_handle stream, const moe_grouped_args& a, u64 plan_bytes_given, u64 partials_bytes_given) const {
    bool found = false;
    boost::hana::for_each(boost::hana::make_range(boost::hana::size_c<0>, boost::hana::length(configs_)), [&](auto i) {
      const auto& c = configs_[i];
      using config = typename std::decay_t<decltype(c)>::config;
      if (found || !config::contains(a.tokens)) return;
      found = true;
      moe_grouped_plan(c.plan, stream, a.hidden, a.ids, a.plan, plan_bytes_given, a.tokens);
      moe_grouped_gate_up(c.gate_up, stream, a.plan, plan_bytes_given, a.experts, a.act, a.act_scales, a.gate_up, a.tokens);
      moe_grouped_down(c.down, stream, a.plan, plan_bytes_given, a.act, a.act_scales, a.experts, a.partials, partials_bytes_given, a.tokens);
      moe_grouped_reduce(c.reduce, stream, a.partials, partials_bytes_given, a.ids, a.route_weights, a.out, a.tokens);
    });
    if (!found)
      throw error(status::invalid_argument, "netra::moe_grouped_experts: tokens must be in [17, 768], got " + std::to_string(a.tokens));
  }

 private:
  template <class Config> struct loaded {
    using config = Config;
    handle<typename Config::plan> plan;
    handle<typename Config::gate_up> gate_up;
    handle<typename Config::down> down;
    handle<typename Config::reduce> reduce;
  };
  template <class Config> static loaded<Config> load_one(const device_info& device, const loader& code_object) {
    return {handle<typename Config::plan>(code_object(instance_name<typename Config::plan>()), device),
            handle<typename Config::gate_up>(code_object(instance_name<typename Config::gate_up>()), device),
            handle<typename Config::down>(code_object(instance_name<typename Config::down>()), device),
            handle<typename Config::reduce>(code_object(instance_name<typename Config::reduce>()), device)};
  }
  static auto load(const device_info& device, const loader& code_object) {
    return boost::hana::transform(tactics::grouped_configs<Target>, [&](auto c) { return load_one<typename decltype(c)::type>(device, code_object); });
  }
  decltype(load(std::declval<const device_info&>(), std::declval<const loader&>())) configs_;
};

}  // namespace netra
