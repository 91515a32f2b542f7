// netra/kernels/gdn/conv_commit.hpp — the replay's conv commit: conv state slot(b) <- window
// accepted[b] - 1 of the verify step's conv update (contracts/gdn/recurrent.hpp, Commit
// accepted_prefix). Windows have the pool's layout, so the copy is of whole slot images and does
// not depend on it.
// Grid (12, B); workgroup 256 threads; thread x of workgroup (w, b) copies the 16-byte vector
// 256 w + x of the slot image (3 x 8192 BF16 = 3072 vectors). Nothing is written for a
// sentinel slot or an accepted length outside [1, T].
#pragma once
#include "netra/contracts/gdn/model.hpp"
#include "netra/dsl/entry.hpp"
#include "netra/dsl/ids.hpp"
#include "netra/dsl/vector_memory.hpp"
#include "netra/kernels/gdn/conv_history.hpp"

namespace netra::kernels {

template <class Contract> struct gdn_conv_commit {
  using target = typename Contract::target;
  static constexpr const char* symbol = "netra_gdn_conv_commit";
  static constexpr u32 workgroup_size = 256;
  static constexpr bool programmatic_dependent_launch = false;
  static constexpr u32 vectors = static_cast<u32>(gdn_conv_map::slot_elements / 8);
  static_assert(vectors % workgroup_size == 0, "netra::kernels::gdn_conv_commit: whole workgroups per slot");

  struct params {
    const u16* windows;  // [B, T, slot image]
    u16* conv_state;     // pool
    const i32* slots;
    const i32* accepted;
    i32 state_slots;
  };

  NETRA_HOST_DEVICE static constexpr launch_shape shape(u32 batch) { return {{vectors / workgroup_size, batch, 1}, workgroup_size, 0}; }

  static NETRA_DEVICE void run(const params& p) {
    const u32 b = workgroup_id<target, 1>();
    const i32 requested = p.slots[b];
    const u32 n = static_cast<u32>(p.accepted[b]);
    if (static_cast<u32>(requested) >= static_cast<u32>(p.state_slots - 1) || n == 0 || n > Contract::tokens) return;
    const u64 e = u64{workgroup_id<target, 0>() * workgroup_size + thread_id<target>()} * 8;
    const u64 window = u64{b} * Contract::tokens + (n - 1);
    store_16B<target>(p.conv_state + static_cast<u64>(requested) * gdn_conv_map::slot_elements + e,
                      load_16B<target, cache_policy::streaming>(p.windows + window * gdn_conv_map::slot_elements + e));
  }
};

}  // namespace netra::kernels
