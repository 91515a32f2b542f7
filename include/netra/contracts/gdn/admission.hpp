// netra/contracts/gdn/admission.hpp — the admission steps the gdn contracts share (conv update,
// precompute, recurrent core): the call's target, the slot list and batch range, the slot pool's
// size (one real slot and the padding sentinel at least) and the row stride of a [rows, 8192]
// BF16 input. Each returns the refusal of its first failing check, or admit().
#pragma once
#include "netra/contracts/gdn/model.hpp"

namespace netra::gdn {

/// The call's target is the contract's.
template <class Target> NETRA_HOST_DEVICE decision admit_target(target_id t) {
  return t == Target::id ? admit() : refuse("target", Target::name, t);
}

/// The target, then slots: a compact [B] i32 tensor on the call's device with B in [1, max_batch].
template <class Target> NETRA_HOST_DEVICE decision admit_slots(target_id t, const tensor_arg& slots, device_ref device, i64 max_batch) {
  if (const decision d = admit_target<Target>(t); !d.admitted()) return d;
  if (const decision d = require_tensor(slots, {"slots", dtype::i32, 1, {-1}, "[B]", layout::compact, 4}, device); !d.admitted()) return d;
  const i64 B = slots.shape[0];
  return B >= 1 && B <= max_batch ? admit() : refuse("batch", "in [1, MaxBatch] (the extent of slots)", B);
}

/// A slot pool of n slots: at least one real slot and the sentinel, indices that fit an i32.
NETRA_HOST_DEVICE decision admit_pool_slots(i64 n) {
  return n >= 2 && n <= 0x7FFFFFFF ? admit() : refuse("state slots", "in [2, 2^31 - 1] (one real slot and the sentinel)", n);
}

/// A [rows, 8192] BF16 input read in 16-byte vectors: its row stride (field "<name> row stride").
NETRA_HOST_DEVICE decision admit_row_stride(const char* field, const tensor_arg& t) {
  const i64 s = row_stride(t);
  return s >= channels && s % 8 == 0 ? admit() : refuse(field, ">= 8192 and a multiple of 8 elements (16-byte aligned rows)", s);
}

}  // namespace netra::gdn
