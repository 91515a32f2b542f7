// netra/runtime/ops/attention_gqa8.hpp — the host launch path of contracts::attention_gqa8:
// build the call's signature, refuse it (nothing launched, nothing written) unless the contract
// admits it, then record stage one (and, for split calls, stage two) on the caller's stream with
// the handle's persistent workspace. Nothing is allocated, looked up or synchronised here.
#pragma once
#include "netra/kernels/attention/gqa8.hpp"
#include "netra/runtime/decision_text.hpp"
#include "netra/runtime/handle.hpp"
#include "netra/runtime/tensor.hpp"

namespace netra {

/// One GQA8 paged-attention call as pointers and sizes (contiguous tensors; see the contract).
struct attention_gqa8_call {
  attention_phase phase = attention_phase::decode;
  const u16* q = nullptr;
  u16* out = nullptr;
  i64 q_tokens = 0;
  const u8* k_buffer = nullptr;
  const u8* v_buffer = nullptr;
  i64 slots = 0;
  i64 page_size = 1;
  const i64* qo_indptr = nullptr;
  const i32* kv_indptr = nullptr;
  const i64* kv_indices = nullptr;
  i64 kv_indices_count = 0;
  const i32* kv_last_page_len = nullptr;
  const float* k_scale = nullptr;
  const float* v_scale = nullptr;
  i64 batch = 0;
  i64 tq = 1;
  const i64* kv_indices_host = nullptr;  // optional: every entry checked against the pool before launch
};

/// The signature of a paged-attention call from raw pointers on device `on` (contiguous tensors:
/// q / out [q_tokens, q_heads, head_dim] BF16, pools [slots, kv_heads, head_dim] E4M3; slots rows in
/// each pool, kv_indices_count entries). `Call` has the fields of attention_gqa8_call.
template <class Call>
attention_signature attention_paged_signature(target_id target, device_ref on, const Call& c, i64 q_heads, i64 kv_heads, i64 head_dim,
                                              float softmax_scale, i64 slices, const void* workspace, u64 workspace_bytes) {
  attention_signature s{};
  s.target = target;
  s.device = on;
  s.phase = c.phase, s.tq = c.tq, s.page_size = c.page_size, s.softmax_scale = softmax_scale;
  s.q = strided_tensor(c.q, dtype::bf16, on, {c.q_tokens, q_heads, head_dim});
  s.out = strided_tensor(c.out, dtype::bf16, on, {c.q_tokens, q_heads, head_dim});
  s.k_buffer = strided_tensor(c.k_buffer, dtype::e4m3, on, {c.slots, kv_heads, head_dim});
  s.v_buffer = strided_tensor(c.v_buffer, dtype::e4m3, on, {c.slots, kv_heads, head_dim});
  s.qo_indptr = strided_tensor(c.qo_indptr, dtype::i64, on, {c.batch + 1});
  s.kv_indptr = strided_tensor(c.kv_indptr, dtype::i32, on, {c.batch + 1});
  s.kv_indices = strided_tensor(c.kv_indices, dtype::i64, on, {c.kv_indices_count});
  if (c.kv_last_page_len != nullptr) s.kv_last_page_len = strided_tensor(c.kv_last_page_len, dtype::i32, on, {c.batch});
  s.k_scale = strided_tensor(c.k_scale, dtype::f32, on, {1});
  s.v_scale = strided_tensor(c.v_scale, dtype::f32, on, {1});
  s.kv_indices_host = c.kv_indices_host;
  s.slices = slices, s.workspace = workspace, s.workspace_bytes = workspace_bytes;
  return s;
}
inline attention_signature attention_gqa8_signature(target_id target, device_ref on, const attention_gqa8_call& c, i64 slices,
                                                    const void* workspace, u64 workspace_bytes) {
  return attention_paged_signature(target, on, c, 16, 2, 256, 0.0625f, slices, workspace, workspace_bytes);
}

/// The slices a call of `batch` requests gets on `h`'s device (Contract::slices_for).
template <class Contract> i64 attention_gqa8_slices(const handle<Contract>& h, i64 batch) {
  return Contract::slices_for(static_cast<u32>(batch < 1 ? 1 : batch), static_cast<u32>(h.device().compute_units));
}

/// Records a call Contract::admits(s) admitted: stage one, and for split calls stage two through
/// the signature's workspace (nothing is checked here).
template <class Contract> void launch_attention_gqa8(const handle<Contract>& h, stream_handle stream, const attention_signature& s) {
  using one = kernels::attention_gqa8_stage_one<Contract>;
  using two = kernels::attention_gqa8_stage_two<Contract>;
  float* ws = static_cast<float*>(const_cast<void*>(s.workspace));
  const kernels::attention_gqa8_args a{static_cast<const u16*>(s.q.data), static_cast<u16*>(const_cast<void*>(s.out.data)),
                                       static_cast<const u8*>(s.k_buffer.data), static_cast<const u8*>(s.v_buffer.data),
                                       static_cast<const i64*>(s.qo_indptr.data), static_cast<const i32*>(s.kv_indptr.data),
                                       static_cast<const i64*>(s.kv_indices.data), static_cast<const i32*>(s.kv_last_page_len.data),
                                       static_cast<const float*>(s.k_scale.data), static_cast<const float*>(s.v_scale.data), ws,
                                       ws == nullptr ? nullptr : ws + Contract::split_o_bytes / 4, s.q_tokens(), s.slots(),
                                       s.kv_indices_count(), static_cast<u32>(s.slices)};
  const u32 batch = static_cast<u32>(s.batch());
  h.template launch<one>(stream, a, one::shape(batch, static_cast<u32>(s.slices)));
  if (s.slices > 1) h.template launch<two>(stream, a, two::shape(batch));
}

/// Records the call with `slices` slices (1: one kernel; more: stage one + stage two through the
/// handle's workspace, one stream at a time). Throws status::invalid_argument /
/// status::workspace_too_small when the contract refuses the call (nothing launched).
template <class Contract> void attention_gqa8(const handle<Contract>& h, stream_handle stream, const attention_gqa8_call& c, i64 slices) {
  const attention_signature s = attention_gqa8_signature(h.device().target, device_of(h.device()), c, slices, h.workspace(), h.workspace_bytes());
  require_admitted<Contract>("netra::attention_gqa8", s);
  launch_attention_gqa8(h, stream, s);
}

/// The same with the device's slice count for the batch.
template <class Contract> void attention_gqa8(const handle<Contract>& h, stream_handle stream, const attention_gqa8_call& c) {
  attention_gqa8(h, stream, c, attention_gqa8_slices(h, c.batch));
}

}  // namespace netra
