// netra/runtime/ops/moe_grouped_dispatch.hpp — the grouped experts (17 .. 768 tokens) on the one
// dispatch path (runtime/op_dispatcher.hpp): the plan, gate_up (act_quant fused), down and the
// route sum, each an operation with its tensors and its tactic list (tactics/moe_grouped.hpp),
// and moe_grouped_dispatcher, which owns the persistent plan and partials buffers and decides all
// four stages before anything is launched. The plan's Tile is the chosen plan tactic's, so
// gate_up's and down's contracts check that they read the plan they were made for. run() of each
// allocates nothing, looks nothing up and never synchronises. Code using this header links libnetra.
#pragma once
#include <array>
#include <string>
#include <type_traits>

#include "netra/runtime/device_memory.hpp"
#include "netra/runtime/op_dispatcher.hpp"
#include "netra/runtime/ops/moe_grouped.hpp"

namespace netra {

/// A caller buffer of `bytes` bytes (the plan, the partials) as a 1-D uint8 tensor.
inline tensor_arg byte_tensor(const void* data, u64 bytes, device_ref device) {
  return strided_tensor(data, dtype::u8, device, {static_cast<i64>(bytes)});
}

/// A stage signature's common fields from its tensors (tokens and plan_tile: the dispatcher's).
template <class Signature> Signature grouped_stage_of(const device_info& d, const tensor_arg& plan, const tensor_arg& act, const tensor_arg& act_scales) {
  Signature s{};
  s.target = d.target;
  s.device = device_of(d);
  s.plan = plan.data;
  s.plan_bytes = static_cast<u64>(plan.extent(0));
  s.act = act;
  s.act_scales = act_scales;
  return s;
}

struct moe_grouped_plan_op : binds_nothing {
  using signature = moe_grouped_plan_signature;
  static constexpr auto tactics = netra::tactics::moe_grouped_plan;
  static constexpr const char* name = "moe_grouped_plan";
  static constexpr std::array<const char*, 3> tensor_names{"hidden", "ids", "plan"};
  static signature signature_of(const device_info& d, const tensor_arg& hidden, const tensor_arg& ids, const tensor_arg& plan) {
    return {d.target, device_of(d), hidden, ids, plan.data, static_cast<u64>(plan.extent(0))};
  }
  template <class C> static void launch(const handle<C>& h, stream_handle stream, const signature& s) {
    launch_moe_grouped_plan(h, stream, s);
  }
};

struct moe_grouped_gate_up_op : binds_nothing {
  using signature = moe_grouped_gate_up_signature;
  static constexpr auto tactics = netra::tactics::moe_grouped_gate_up;
  static constexpr const char* name = "moe_grouped_gate_up";
  static constexpr std::array<const char*, 6> tensor_names{"plan", "w13", "s13", "act", "act_scales", "gate_up"};
  /// tokens and plan_tile are the dispatcher's (the call's M, the chosen plan's Tile).
  static signature signature_of(const device_info& d, const tensor_arg& plan, const tensor_arg& w13, const tensor_arg& s13, const tensor_arg& act,
                                const tensor_arg& act_scales, const tensor_arg& gate_up) {
    signature s = grouped_stage_of<signature>(d, plan, act, act_scales);
    s.w13 = w13;
    s.s13 = s13;
    s.gate_up = gate_up;
    return s;
  }
  template <class C> static void launch(const handle<C>& h, stream_handle stream, const signature& s) {
    launch_moe_grouped_gate_up(h, stream, s);
  }
};

struct moe_grouped_down_op : binds_nothing {
  using signature = moe_grouped_down_signature;
  static constexpr auto tactics = netra::tactics::moe_grouped_down;
  static constexpr const char* name = "moe_grouped_down";
  static constexpr std::array<const char*, 6> tensor_names{"plan", "act", "act_scales", "w2", "s2", "partials"};
  static signature signature_of(const device_info& d, const tensor_arg& plan, const tensor_arg& act, const tensor_arg& act_scales, const tensor_arg& w2,
                                const tensor_arg& s2, const tensor_arg& partials) {
    signature s = grouped_stage_of<signature>(d, plan, act, act_scales);
    s.w2 = w2;
    s.s2 = s2;
    s.partials = partials.data;
    s.partials_bytes = static_cast<u64>(partials.extent(0));
    return s;
  }
  template <class C> static void launch(const handle<C>& h, stream_handle stream, const signature& s) {
    launch_moe_grouped_down(h, stream, s);
  }
};

struct moe_grouped_reduce_op : binds_nothing {
  using signature = moe_grouped_reduce_signature;
  static constexpr auto tactics = netra::tactics::moe_grouped_reduce;
  static constexpr const char* name = "moe_grouped_reduce";
  static constexpr std::array<const char*, 4> tensor_names{"partials", "ids", "route_weights", "out"};
  static signature signature_of(const device_info& d, const tensor_arg& partials, const tensor_arg& ids, const tensor_arg& route_weights,
                                const tensor_arg& out) {
    return {d.target, device_of(d), partials.data, static_cast<u64>(partials.extent(0)), ids, route_weights, out};
  }
  template <class C> static void launch(const handle<C>& h, stream_handle stream, const signature& s) {
    launch_moe_grouped_reduce(h, stream, s);
  }
};

/// The grouped experts of one device: the four stages' tactics, and the plan and partials buffers
/// (persistent; one dispatcher serves one stream at a time).
class moe_grouped_dispatcher {
 public:
  /// The largest plan and partials of any configuration of either target.
  static constexpr u64 plan_bytes = moe::grouped_plan_layout<768, 32>::bytes > moe::grouped_plan_layout<768, 64>::bytes
                                        ? moe::grouped_plan_layout<768, 32>::bytes
                                        : moe::grouped_plan_layout<768, 64>::bytes;
  static constexpr u64 partials_bytes = contracts::moe_grouped_reduce<sm90a, 257, 768, 1>::partials_bytes;

  moe_grouped_dispatcher(const device_info& device, const jit::options& jit)
      : plan_(device, jit), gate_up_(device, jit), down_(device, jit), reduce_(device, jit), plan_buffer_(device.api, plan_bytes),
        partials_buffer_(device.api, partials_bytes) {}

  struct choice {
    selection<moe_grouped_plan_signature> plan;
    selection<moe_grouped_gate_up_signature> gate_up;
    selection<moe_grouped_down_signature> down;
    selection<moe_grouped_reduce_signature> reduce;
    bool runnable() const {
      bool all = true;
      each_selection(*this, [&](const char*, const auto& selected) { all = all && selected.tactic != fallback; });
      return all;
    }
  };

  /// The stage list, in launch order: f(name, the choice's selection of the stage) for each stage.
  template <class Choice, class F> static void each_selection(Choice& c, F f) {
    f("plan", c.plan);
    f("gate_up (act_quant fused)", c.gate_up);
    f("down", c.down);
    f("route sum", c.reduce);
  }

  /// Every stage decided, nothing launched: hidden [M, 2048], ids / route_weights [M, 9] (as the
  /// router and shared gate write them), the expert weights, act [9M, 512] + act_scales [9M, 4]
  /// (written), out [M, 2048] (written), gate_up: a missing tensor, or BF16 [9M, 1024] that gate_up
  /// also writes (its rows before act_quant; nothing else changes). Throws
  /// status::invalid_argument for a strict refusal.
  choice select(const tensor_arg& hidden, const tensor_arg& ids, const tensor_arg& route_weights, const tensor_arg& w13, const tensor_arg& s13,
                const tensor_arg& w2, const tensor_arg& s2, const tensor_arg& act, const tensor_arg& act_scales, const tensor_arg& out,
                const tensor_arg& gate_up = {}) const {
    const device_ref on = device_of(plan_.tactics().device());
    const tensor_arg plan = byte_tensor(plan_buffer_.data(), plan_buffer_.size(), on), partials = byte_tensor(partials_buffer_.data(), partials_buffer_.size(), on);
    choice c;
    c.plan = plan_.select(plan_.signature_of(hidden, ids, plan));
    if (c.plan.tactic == fallback) return c;
    i64 tile = 0;
    plan_.tactics().visit(c.plan.tactic, [&](const auto& h) { tile = std::remove_cvref_t<decltype(h)>::contract::tile; });
    const i64 tokens = c.plan.signature.tokens();
    auto g = gate_up_.signature_of(plan, w13, s13, act, act_scales, gate_up);
    g.tokens = tokens;
    g.plan_tile = tile;
    c.gate_up = gate_up_.select(g);
    auto d = down_.signature_of(plan, act, act_scales, w2, s2, partials);
    d.tokens = tokens;
    d.plan_tile = tile;
    c.down = down_.select(d);
    c.reduce = reduce_.select(reduce_.signature_of(partials, ids, route_weights, out));
    return c;
  }

  /// Each stage's explanation of a choice (the tactic it chose or why none), in launch order.
  /// (A choice whose plan has no tactic decided no later stage: its explanation ends there.)
  std::string explain(const choice& c) const {
    std::string s;
    each_selection(c, [&](const char* name, const auto& selected) {
      if (!s.empty() && c.plan.tactic == fallback) return;
      s += (s.empty() ? "" : "\n") + std::string(name) + ":\n" + stage_of(selected).explain(selected.signature).text();
    });
    return s;
  }

  /// Records the four stages of a runnable choice on `stream`.
  void launch(stream_handle stream, const choice& c) const {
    each_selection(c, [&](const char*, const auto& selected) { stage_of(selected).launch(stream, selected); });
  }

 private:
  // a stage's dispatcher from its selection's type
  const op_dispatcher<moe_grouped_plan_op>& stage_of(const selection<moe_grouped_plan_signature>&) const { return plan_; }
  const op_dispatcher<moe_grouped_gate_up_op>& stage_of(const selection<moe_grouped_gate_up_signature>&) const { return gate_up_; }
  const op_dispatcher<moe_grouped_down_op>& stage_of(const selection<moe_grouped_down_signature>&) const { return down_; }
  const op_dispatcher<moe_grouped_reduce_op>& stage_of(const selection<moe_grouped_reduce_signature>&) const { return reduce_; }

  op_dispatcher<moe_grouped_plan_op> plan_;
  op_dispatcher<moe_grouped_gate_up_op> gate_up_;
  op_dispatcher<moe_grouped_down_op> down_;
  op_dispatcher<moe_grouped_reduce_op> reduce_;
  device_buffer plan_buffer_, partials_buffer_;
};

}  // namespace netra
