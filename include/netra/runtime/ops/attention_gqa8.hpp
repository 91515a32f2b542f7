// netra/runtime/ops/attention_gqa8.hpp — the host launch path of contracts::attention_gqa8:
// build the call's signature, refuse it (nothing launched, nothing written) unless the contract
// admits it, then record stage one (and, for split calls, stage two) on the caller's stream with
// the handle's persistent workspace. Nothing is allocated, looked up or synchronised here.
#pragma once
#include "netra/kernels/attention/gqa8.hpp"
#include "netra/runtime/decision_text.hpp"
#include "netra/runtime/handle.hpp"

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

inline attention_signature attention_gqa8_signature(target_id target, const attention_gqa8_call& c, i64 slices, const void* workspace,
                                                    u64 workspace_bytes) {
  attention_signature s{};
  s.target = target;
  s.phase = c.phase;
  s.q_heads = 16, s.kv_heads = 2, s.head_dim = 256, s.softmax_scale = 0.0625f;
  s.batch = c.batch, s.tq = c.tq, s.q_tokens = c.q_tokens;
  s.q_token_stride = s.out_token_stride = 16 * 256;
  s.page_size = c.page_size, s.slots = c.slots, s.kv_slot_stride = 2 * 256, s.kv_indices_count = c.kv_indices_count;
  s.kv_indices_host = c.kv_indices_host;
  s.q = c.q, s.out = c.out, s.k_buffer = c.k_buffer, s.v_buffer = c.v_buffer;
  s.qo_indptr = c.qo_indptr, s.kv_indptr = c.kv_indptr, s.kv_indices = c.kv_indices, s.kv_last_page_len = c.kv_last_page_len;
  s.k_scale = c.k_scale, s.v_scale = c.v_scale;
  s.slices = slices, s.workspace = workspace, s.workspace_bytes = workspace_bytes;
  return s;
}

/// The slices a call of `batch` requests gets on `h`'s device (Contract::slices_for).
template <class Contract> i64 attention_gqa8_slices(const handle<Contract>& h, i64 batch) {
  return Contract::slices_for(static_cast<u32>(batch < 1 ? 1 : batch), static_cast<u32>(h.device().compute_units));
}

/// Records the call with `slices` slices (1: one kernel; more: stage one + stage two through the
/// handle's workspace, one stream at a time). Throws status::invalid_argument /
/// status::workspace_too_small when the contract refuses the call.
template <class Contract> void attention_gqa8(const handle<Contract>& h, stream_handle stream, const attention_gqa8_call& c, i64 slices) {
  require_admitted<Contract>("netra::attention_gqa8", attention_gqa8_signature(h.device().target, c, slices, h.workspace(), h.workspace_bytes()));
  using one = kernels::attention_gqa8_stage_one<Contract>;
  using two = kernels::attention_gqa8_stage_two<Contract>;
  float* ws = static_cast<float*>(h.workspace());
  const kernels::attention_gqa8_args a{c.q, c.out, c.k_buffer, c.v_buffer, c.qo_indptr, c.kv_indptr, c.kv_indices, c.kv_last_page_len,
                                       c.k_scale, c.v_scale, ws, ws + Contract::split_o_bytes / 4, c.q_tokens, c.slots,
                                       c.kv_indices_count, static_cast<u32>(slices)};
  h.template launch<one>(stream, a, one::shape(static_cast<u32>(c.batch), static_cast<u32>(slices)));
  if (slices > 1) h.template launch<two>(stream, a, two::shape(static_cast<u32>(c.batch)));
}

/// The same with the device's slice count for the batch.
template <class Contract> void attention_gqa8(const handle<Contract>& h, stream_handle stream, const attention_gqa8_call& c) {
  attention_gqa8(h, stream, c, attention_gqa8_slices(h, c.batch));
}

}  // namespace netra
