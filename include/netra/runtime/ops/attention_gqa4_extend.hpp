// netra/runtime/ops/attention_gqa4_extend.hpp — the host launch path of
// contracts::attention_gqa4_extend: build the call's signature, refuse it (nothing launched,
// nothing written) unless the contract admits it, then record stage zero, the view's stage one and
// stage two (the native contract: its stage one and stage two; from 16 slices on the wide
// stage two, the same bits; stage two is a programmatic dependent of stage one) on the caller's
// stream with the handle's persistent workspace.
// Nothing is allocated, looked up or synchronised here.
#pragma once
#include "netra/kernels/attention/extend.hpp"
#include "netra/kernels/attention/extend_native.hpp"
#include "netra/runtime/ops/attention_gqa8.hpp"

namespace netra {

/// One GQA4 extend call as pointers and sizes (contiguous tensors; see the contract): the paged
/// call's fields (tq: the call's longest extension) and the extension's own K / V.
struct attention_extend_call : attention_gqa8_call {
  const u16* k_extend = nullptr;  // [q_tokens, 8, 128] BF16
  const u16* v_extend = nullptr;
  attention_extend_call() { phase = attention_phase::extend, tq = 12; }
};

/// The signature of an extend call from raw pointers (attention_paged_signature and the extension).
inline attention_signature attention_extend_signature(target_id target, device_ref on, const attention_extend_call& c, i64 slices,
                                                      const void* workspace, u64 workspace_bytes) {
  using contract = contracts::attention_gqa4_extend_served<sm90a>;
  attention_signature s = attention_paged_signature(target, on, c, contract::q_heads, contract::kv_heads, contract::head_dim, contract::softmax_scale,
                                                    slices, workspace, workspace_bytes);
  s.k_extend = strided_tensor(c.k_extend, dtype::bf16, on, {c.q_tokens, contract::kv_heads, contract::head_dim});
  s.v_extend = strided_tensor(c.v_extend, dtype::bf16, on, {c.q_tokens, contract::kv_heads, contract::head_dim});
  return s;
}

/// The slices a call of `batch` requests gets on `h`'s device (Contract::slices_for).
template <class Contract> i64 attention_extend_slices(const handle<Contract>& h, i64 batch) {
  return Contract::slices_for(static_cast<u32>(batch < 1 ? 1 : batch), static_cast<u32>(h.device().compute_units));
}

/// Records a call Contract::admits(s) admitted (nothing is checked here); stage two in `Form`
/// (kernels::extend_stage_two_form), or when void the form the call's size is served with.
template <class Contract, class Form = void> void launch_attention_extend(const handle<Contract>& h, stream_handle stream, const attention_signature& s) {
  using two = kernels::attention_extend_stage_two<Contract>;
  u8* ws = static_cast<u8*>(const_cast<void*>(s.workspace));
  u16* q_pad = reinterpret_cast<u16*>(ws);
  i64* qo_pad = reinterpret_cast<i64*>(ws + Contract::q_pad_bytes);
  float* split_o = reinterpret_cast<float*>(ws + Contract::q_pad_bytes + Contract::qo_pad_bytes);
  float* split_stats = reinterpret_cast<float*>(ws + Contract::q_pad_bytes + Contract::qo_pad_bytes + Contract::split_o_bytes);
  const u32 batch = static_cast<u32>(s.batch());
  const i64* qo = static_cast<const i64*>(s.qo_indptr.data);
  const kernels::attention_extend_args a{
      {Contract::native ? static_cast<const u16*>(s.q.data) : q_pad, nullptr, static_cast<const u8*>(s.k_buffer.data),
       static_cast<const u8*>(s.v_buffer.data), Contract::native ? qo : qo_pad,
       static_cast<const i32*>(s.kv_indptr.data), static_cast<const i64*>(s.kv_indices.data), static_cast<const i32*>(s.kv_last_page_len.data),
       static_cast<const float*>(s.k_scale.data), static_cast<const float*>(s.v_scale.data), split_o, split_stats,
       Contract::native ? s.q_tokens() : static_cast<i64>(batch) * Contract::max_extend, s.slots(), s.kv_indices_count(), static_cast<u32>(s.slices)},
      static_cast<const u16*>(s.q.data), static_cast<u16*>(const_cast<void*>(s.out.data)), static_cast<const u16*>(s.k_extend.data),
      static_cast<const u16*>(s.v_extend.data), qo, q_pad, qo_pad, s.q_tokens()};
  if constexpr (Contract::native) {
    using native_one = kernels::attention_extend_native_stage_one<Contract>;
    h.template launch<native_one>(stream, a, native_one::shape(batch, static_cast<u32>(s.slices)));
  } else {
    using zero = kernels::attention_extend_stage_zero<Contract>;
    using one = kernels::attention_gqa8_stage_one<typename Contract::pair_view>;
    h.template launch<zero>(stream, a, zero::shape(batch));
    h.template launch<one>(stream, a.view, one::shape(batch, static_cast<u32>(s.slices)));
  }
  if constexpr (!same_v<Form, void>) {
    using chosen = kernels::attention_extend_stage_two<Contract, Form>;
    h.template launch<chosen>(stream, a, chosen::shape(batch));
  } else if (s.slices >= two::wide_slices) {
    using wide = kernels::attention_extend_stage_two<Contract, kernels::extend_stage_two_wide>;
    h.template launch<wide>(stream, a, wide::shape(batch));
  } else {
    using rows = kernels::attention_extend_stage_two<Contract, kernels::extend_stage_two_rows>;
    h.template launch<rows>(stream, a, rows::shape(batch));
  }
}

/// Records the call with `slices` slices (stage two in `Form`, void: the served form). Throws
/// status::invalid_argument / status::workspace_too_small when the contract refuses the call
/// (nothing launched).
template <class Contract, class Form = void>
void attention_extend(const handle<Contract>& h, stream_handle stream, const attention_extend_call& c, i64 slices) {
  const attention_signature s = attention_extend_signature(h.device().target, device_of(h.device()), c, slices, h.workspace(), h.workspace_bytes());
  require_admitted<Contract>("netra::attention_extend", s);
  launch_attention_extend<Contract, Form>(h, stream, s);
}
template <class Contract> void attention_extend(const handle<Contract>& h, stream_handle stream, const attention_extend_call& c) {
  attention_extend(h, stream, c, attention_extend_slices(h, c.batch));
}

}  // namespace netra
