// netra/contracts/gdn/decode.hpp — the one-token decode step of a GDN layer (every decode graph
// bucket, B 1..128 requests of one token each) as instances of the verify step's contracts with
// T = 1: no new semantics, the same kernels.
//   conv:       gdn_conv, T 1, Writes final_state (no windows: a decode token is always accepted),
//               either conv state layout;
//   precompute: gdn_precompute, T 1 (rows = B);
//   core:       gdn_recurrent, T 1, Commit final: the token's output and the state after it
//               committed to the request's slot (FP32 or BF16 storage; BF16 rounds once per step).
// Slots as the verify contracts: the last slot of a pool is the padding sentinel (read, never
// written). A decode step of one token therefore equals one step of the host recurrence from the
// slot's stored state (tests/kernels/test_gdn_decode.cpp, tests/gpu/test_gdn_decode_gpu.cpp).
#pragma once
#include "netra/contracts/gdn/conv.hpp"
#include "netra/contracts/gdn/precompute.hpp"
#include "netra/contracts/gdn/recurrent.hpp"

namespace netra::contracts {
inline constexpr u32 gdn_decode_max_batch = 128;
template <class Target, u32 Layout>
using gdn_decode_conv = gdn_conv<Target, gdn_decode_max_batch, 1, Layout, gdn::conv_writes::final_state>;
template <class Target> using gdn_decode_precompute = gdn_precompute<Target, gdn_decode_max_batch, 1>;
/// The core with the recurrent contract's mapping fields (the same bits for every choice; the
/// defaults are the per-token default map).
template <class Target, u32 StateStorage, u32 ValueBlock = gdn_default_value_block<Target>, u32 Staging = gdn::token_staging::per_token, u32 Waves = 1,
          u32 Columns = 1, u32 Prefetch = 0>
using gdn_decode_core =
    gdn_recurrent<Target, gdn::state_commit::final, gdn_decode_max_batch, 1, StateStorage, ValueBlock, Staging, Waves, Columns, Prefetch>;
}  // namespace netra::contracts
