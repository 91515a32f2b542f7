// netra/runtime/ops/moe_block.hpp — the whole MoE block of Qwen3.6-35B-A3B for 1..768 tokens on
// one stream, built from the per-stage tactic lists (embedded or JIT-compiled like every
// operation's): router with the shared-expert gate appended (all nine route slots;
// tactics::moe_block_router: exact 1..16, matrix 17..768) -> the experts:
//
//   variant unfused, 1..16 tokens: gate_up (tactics::moe_expert_gate_up, its schedule threshold
//     there), act_quant (tactics::moe_act_quant), down with the weighted route sum
//     (tactics::moe_expert_down) of act_quant's E4M3 (one persistent launch of the three measured
//     slower on the H200 at every M: lab/moe, docs/kernels/moe-experts.md)
//   variant fused, 1..4 tokens: gate_up, down of gate_up's BF16 (act_quant fused)
//   variant unfused, 17..768 tokens: the grouped experts (ops/moe_grouped_dispatch.hpp: plan,
//     gate_up with act_quant fused into act / act_scales, down, route sum); the gate_up tensor is
//     optional there (written when given: gate_up's BF16 rows, nothing else changes)
//
// On sm90a every kernel runs with programmatic dependent launch: each waits before it reads its
// predecessor's output and releases its successor early.
//
// select() decides every stage before anything is launched: a stage no tactic admits, or a
// strict refusal in any stage, launches nothing. run() then records the selected stages as they
// were admitted; it allocates nothing, looks nothing up and never synchronises (capturable into
// one CUDA graph). The caller owns the intermediate tensors (stable across graph replays); the
// router's and gate_up's workspaces are their handles' (one block serves one stream at a time).
// Code using this header links libnetra.
#pragma once
#include <array>
#include <string>

#include "netra/runtime/ops/moe_experts_dispatch.hpp"
#include "netra/runtime/ops/moe_grouped_dispatch.hpp"
#include "netra/runtime/ops/moe_routing_dispatch.hpp"

namespace netra {

/// The C ABI's netra_moe_block_variant.
enum class moe_block_variant { unfused = 0, fused = 1 };

/// The tensors of one block call (runtime/tensor.hpp), in moe_block_tensor_names order.
struct moe_block_tensors {
  tensor_arg hidden;              // bfloat16 [M, 2048]
  tensor_arg router_weight;       // bfloat16 [256, 2048]
  tensor_arg shared_gate_weight;  // bfloat16 [2048]
  tensor_arg w13, s13, w2, s2;    // expert weights (expert_weights.hpp), the shared expert's slice included
  tensor_arg ids;                 // int32 [M, 9]          (written: route metadata)
  tensor_arg route_weights;       // float32 [M, 9]        (written)
  tensor_arg gate_up;             // bfloat16 [9M, 1024]   (written; 17..768 tokens: may be NULL)
  tensor_arg act;                 // E4M3 [9M, 512]        (written, unfused; may be NULL fused)
  tensor_arg act_scales;          // float32 [9M, 4]       (written, unfused; may be NULL fused)
  tensor_arg out;                 // bfloat16 [M, 2048]    (written)
};
inline constexpr std::array<const char*, 13> moe_block_tensor_names{"hidden", "router_weight", "shared_gate_weight", "w13", "s13", "w2", "s2",
                                                                   "ids", "route_weights", "gate_up", "act", "act_scales", "out"};

/// Raw device pointers of one block call (the C++ entry point; the model's sizes for `tokens`).
struct moe_block_args {
  const void* hidden = nullptr;
  const void* router_weight = nullptr;
  const void* shared_gate_weight = nullptr;
  moe_expert_weights experts;
  i32* ids = nullptr;
  float* route_weights = nullptr;
  void* gate_up = nullptr;
  void* act = nullptr;
  float* act_scales = nullptr;
  void* out = nullptr;
  i64 tokens = 0;
};

class moe_block_dispatcher {
 public:
  moe_block_dispatcher(const device_info& device, const jit::options& jit)
      : router_(device, jit), gate_up_(device, jit), act_quant_(device, jit), down_(device, jit), grouped_(device, jit) {}

  /// Every stage's tactic and admitted signature, decided before anything is launched.
  struct plan {
    selection<moe_router_signature> router;
    selection<moe_gate_up_signature> gate_up;
    selection<moe_act_quant_signature> act_quant;  // unfused only
    selection<moe_down_signature> down;
    bool fused = false;
    bool grouped = false;                    // 17..768 tokens: the grouped experts after the router
    moe_grouped_dispatcher::choice experts;  // grouped only
    bool runnable() const {
      if (grouped) return router.tactic != fallback && experts.runnable();
      return router.tactic != fallback && gate_up.tactic != fallback && down.tactic != fallback && (fused || act_quant.tactic != fallback);
    }
  };

  /// Throws status::invalid_argument when a strict tactic of any stage refuses its call.
  plan select(const moe_block_tensors& t, moe_block_variant variant) const {
    plan p;
    p.fused = variant == moe_block_variant::fused;
    p.router = router_.select(router_signature(t));
    p.grouped = !p.fused && t.hidden.rank == 2 && t.hidden.shape[0] > tactics::grouped_min_tokens - 1;
    if (p.grouped) {
      p.experts = grouped_.select(t.hidden, t.ids, t.route_weights, t.w13, t.s13, t.w2, t.s2, t.act, t.act_scales, t.out, t.gate_up);
      return p;
    }
    p.gate_up = gate_up_.select(gate_up_signature(t));
    if (!p.fused) p.act_quant = act_quant_.select(act_quant_signature(t));
    p.down = down_.select(down_signature(t, p.fused));
    return p;
  }

  /// Records the block on `stream` and returns true; false when a stage has no tactic that
  /// admits its call (nothing launched). Throws as select() does (nothing launched).
  bool run(stream_handle stream, const moe_block_tensors& t, moe_block_variant variant) const {
    const plan p = select(t, variant);
    if (!p.runnable()) return false;
    record(stream, p, all_stages);
    return true;
  }

  /// Stages of a decode plan (1..16 tokens), as bits of record()'s mask.
  static constexpr unsigned router_stage = 1, gate_up_stage = 2, act_quant_stage = 4, down_stage = 8, all_stages = 15;

  /// Records the stages of a runnable plan that `stages` names, as select() admitted them (the
  /// grouped experts count as one stage, down_stage). run() records all; a subset is the decode
  /// attribution's (bench/moe_decode_stages.cpp: a prefix of the chain, or one stage alone on the
  /// intermediates an earlier call left).
  void record(stream_handle stream, const plan& p, unsigned stages) const {
    if (stages & router_stage) router_.launch(stream, p.router);
    if (p.grouped) {
      if (stages & down_stage) grouped_.launch(stream, p.experts);
      return;
    }
    if (stages & gate_up_stage) gate_up_.launch(stream, p.gate_up);
    if (!p.fused && (stages & act_quant_stage)) act_quant_.launch(stream, p.act_quant);
    if (stages & down_stage) down_.launch(stream, p.down);
  }

  /// The same from raw pointers; throws status::not_supported naming the stage (nothing
  /// launched) when one has no tactic.
  void run(stream_handle stream, const moe_block_args& a, moe_block_variant variant) const {
    const moe_block_tensors t = tensors_of(a);
    if (!run(stream, t, variant)) throw error(status::not_supported, "netra::moe_block: a stage has no tactic for this call:\n" + explain(t, variant));
  }

  /// Each stage's explanation (the tactic it chose, or why none), in launch order. Throws as
  /// select() does.
  std::string explain(const moe_block_tensors& t, moe_block_variant variant) const {
    const bool fused = variant == moe_block_variant::fused;
    std::string s = "router (+ shared gate):\n" + router_.explain(router_signature(t)).text();
    const plan p = select(t, variant);
    if (p.grouped) return s + "\ngrouped experts, " + std::to_string(t.hidden.shape[0]) + " tokens:\n" + grouped_.explain(p.experts);
    s += "\ngate_up:\n" + gate_up_.explain(gate_up_signature(t)).text();
    if (!fused) s += "\nact_quant:\n" + act_quant_.explain(act_quant_signature(t)).text();
    return s + "\ndown" + (fused ? " (act_quant fused)" : "") + ":\n" + down_.explain(down_signature(t, fused)).text();
  }

  /// A call's tensors from raw pointers on this device.
  moe_block_tensors tensors_of(const moe_block_args& a) const {
    const device_info& d = router_.tactics().device();
    const device_ref on = device_of(d);
    using W = moe::expert_weights;
    const i64 m = a.tokens, slots = moe::route_layout::slots;
    const auto g = moe_gate_up_call_signature(d.target, on, a.hidden, a.ids, a.experts, a.gate_up, m);
    const auto dn = moe_down_call_signature<contracts::moe_expert_down_decode<sm90a>>(d.target, on, a.act, a.act_scales, a.ids, a.route_weights,
                                                                                      a.experts, a.out, m);
    return {g.hidden,
            strided_tensor(a.router_weight, dtype::bf16, on, {moe::route_layout::routed_experts, W::hidden}),
            strided_tensor(a.shared_gate_weight, dtype::bf16, on, {W::hidden}),
            g.w13,
            g.s13,
            dn.w2,
            dn.s2,
            g.ids,
            strided_tensor(a.route_weights, dtype::f32, on, {m, slots}),
            a.gate_up ? g.out : tensor_arg{},
            a.act ? dn.act : tensor_arg{},
            dn.act_scales,
            dn.out};
  }

 private:
  moe_router_signature router_signature(const moe_block_tensors& t) const {
    return router_.signature_of(t.hidden, t.router_weight, t.shared_gate_weight, t.ids, t.route_weights);
  }
  moe_gate_up_signature gate_up_signature(const moe_block_tensors& t) const { return gate_up_.signature_of(t.hidden, t.ids, t.w13, t.s13, t.gate_up); }
  moe_act_quant_signature act_quant_signature(const moe_block_tensors& t) const { return act_quant_.signature_of(t.gate_up, t.act, t.act_scales); }
  moe_down_signature down_signature(const moe_block_tensors& t, bool fused) const {
    return fused ? down_.signature_of(t.gate_up, tensor_arg{}, t.ids, t.route_weights, t.w2, t.s2, t.out)
                 : down_.signature_of(t.act, t.act_scales, t.ids, t.route_weights, t.w2, t.s2, t.out);
  }

  op_dispatcher<moe_block_router_op> router_;
  op_dispatcher<moe_gate_up_op> gate_up_;
  op_dispatcher<moe_act_quant_op> act_quant_;
  op_dispatcher<moe_down_op> down_;
  moe_grouped_dispatcher grouped_;
};

}  // namespace netra
