// netra/contracts/attention/paged_cache.hpp — what every attention contract over SGLang's paged
// FP8 cache requires of a call's cache part (the ABI of gqa8_paged.hpp), in one place: the pools,
// the page table, the last-page lengths, the scales, and the host mirror of the indices.
#pragma once
#include "netra/contracts/common.hpp"

namespace netra {

/// The pools [slots, kv_heads, head_dim] FP8 in `Format` (dtype::e4m3 / e4m3fnuz, or uint8;
/// k_buffer a positive multiple of PageSize slots, at most 2^40; v_buffer as many), kv_indptr int32 [batch + 1], kv_indices int64 (at most 2^31
/// entries), kv_last_page_len int32 [batch] (page size 16 only), k_scale / v_scale float32 [] or
/// [1]; admit() or the first refusal in that order. k_text / v_text name the pools' shapes.
template <u32 PageSize, class Format = fp8::e4m3fn, class Signature>
decision require_paged_cache(const Signature& s, i64 batch, i64 kv_heads, i64 head_dim, const char* k_text, const char* v_text) {
  if (const decision d = require_tensor(s.k_buffer, {"k_buffer", fp8_dtype_v<Format>, 3, {-1, kv_heads, head_dim}, k_text, layout::compact, 16}, s.device);
      !d.admitted())
    return d;
  if (s.slots() < PageSize || s.slots() % PageSize != 0 || s.slots() > (i64{1} << 40))
    return refuse("k_buffer", "a positive multiple of PageSize slots", s.slots());
  if (const decision d = require_tensor(s.v_buffer, {"v_buffer", fp8_dtype_v<Format>, 3, {s.slots(), kv_heads, head_dim}, v_text, layout::compact, 16}, s.device);
      !d.admitted())
    return d;
  if (const decision d = require_tensor(s.kv_indptr, {"kv_indptr", dtype::i32, 1, {batch + 1}, "[batch + 1]", layout::compact, 4}, s.device);
      !d.admitted())
    return d;
  if (const decision d = require_tensor(s.kv_indices, {"kv_indices", dtype::i64, 1, {-1}, "[entries]", layout::compact, 8}, s.device); !d.admitted())
    return d;
  if (s.kv_indices_count() > (i64{1} << 31)) return refuse("kv_indices", "at most 2^31 entries", s.kv_indices_count());
  if constexpr (PageSize > 1)
    if (const decision d = require_tensor(s.kv_last_page_len, {"kv_last_page_len", dtype::i32, 1, {batch}, "[batch]", layout::compact, 4}, s.device);
        !d.admitted())
      return d;
  const char* const names[2] = {"k_scale", "v_scale"};
  const tensor_arg* const scales[2] = {&s.k_scale, &s.v_scale};
  for (int i = 0; i < 2; ++i) {
    const tensor_rule rule = scales[i]->rank == 0 ? tensor_rule{names[i], dtype::f32, 0, {}, "[] or [1]", layout::compact, 4}
                                                  : tensor_rule{names[i], dtype::f32, 1, {1}, "[] or [1]", layout::compact, 4};
    if (const decision d = require_tensor(*scales[i], rule, s.device); !d.admitted()) return d;
  }
  return admit();
}

/// What a paged attention contract fixes of a call's query side (refusal texts included).
struct paged_query_rule {
  i64 q_heads, head_dim, max_batch, tokens_per_request;  // q holds at least batch * tokens_per_request tokens
  float softmax_scale;
  const char* scale_text;   // the requirement of softmax_scale, e.g. "== 1/16 (in millionths)"
  const char* q_text;       // q's shape, e.g. "[tokens, 16, 256]"
  const char* out_text;     // out's shape, e.g. "[tokens of q, 16, 256]"
  const char* tokens_text;  // the requirement of q's token count
};

/// The query side every paged attention call shares, after the contract's target / phase / Tq
/// checks: page size PageSize, the rule's softmax scale, q BF16 [tokens, q_heads, head_dim]
/// compact, qo_indptr int64 [batch + 1], batch in [1, max_batch], tokens in [batch *
/// tokens_per_request, 2^31], out BF16 [tokens, q_heads, head_dim]; admit() or the first refusal.
template <u32 PageSize, class Signature> decision require_paged_queries(const Signature& s, const paged_query_rule& r) {
  if (s.page_size != PageSize) return refuse("page_size", "== PageSize of the contract", s.page_size);
  if (s.softmax_scale != r.softmax_scale) return refuse("softmax_scale", r.scale_text, static_cast<i64>(s.softmax_scale * 1e6f));
  if (const decision d = require_tensor(s.q, {"q", dtype::bf16, 3, {-1, r.q_heads, r.head_dim}, r.q_text, layout::compact, 16}, s.device); !d.admitted())
    return d;
  if (const decision d = require_tensor(s.qo_indptr, {"qo_indptr", dtype::i64, 1, {-1}, "[batch + 1]", layout::compact, 8}, s.device); !d.admitted())
    return d;
  const i64 batch = s.batch(), tokens = s.q_tokens();
  if (batch < 1 || batch > r.max_batch) return refuse("batch", "in [1, MaxBatch] (qo_indptr has batch + 1 entries)", batch);
  if (tokens < batch * r.tokens_per_request || tokens > (i64{1} << 31)) return refuse("q", r.tokens_text, tokens);
  return require_tensor(s.out, {"out", dtype::bf16, 3, {tokens, r.q_heads, r.head_dim}, r.out_text, layout::compact, 16}, s.device);
}

/// When the call gives the host mirror of kv_indices: every entry inside the pool (slots / PageSize
/// pages), else the refusal naming the first entry outside it.
template <u32 PageSize, class Signature> decision require_mirrored_indices(const Signature& s) {
  if (s.kv_indices_host != nullptr)
    for (i64 i = 0; i < s.kv_indices_count(); ++i)
      if (s.kv_indices_host[i] < 0 || s.kv_indices_host[i] >= s.slots() / PageSize)
        return refuse("kv_indices", "every entry inside the pool (host mirror checked)", s.kv_indices_host[i]);
  return admit();
}


}  // namespace netra
