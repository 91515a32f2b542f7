// netra/kernels/moe/router_select.hpp — the router's top-8 selection network: 64-bit keys
// (larger probability first, then the lower expert), a compare-exchange, the 19-comparator
// sorting network of 8 keys and the bitonic merge that keeps the top 8 of two sorted lists.
// Used by the route kernel (router_route.hpp) on every lane of a 32-lane group; host tests run
// the same functions (tests/kernels/test_moe_router_model.cpp).
#pragma once
#include "netra/dsl/config.hpp"
#include "netra/dsl/math.hpp"

namespace netra::kernels {


/// The 64-bit selection key of expert x with probability p >= 0: larger p first, then lower x.
NETRA_HOST_DEVICE constexpr u64 router_key(float p, u32 expert) {
  return (static_cast<u64>(bit_cast<u32>(p)) << 32) | static_cast<u32>(~expert);
}
NETRA_HOST_DEVICE constexpr u32 router_key_expert(u64 key) { return ~static_cast<u32>(key); }
NETRA_HOST_DEVICE constexpr float router_key_p(u64 key) { return bit_cast<float>(static_cast<u32>(key >> 32)); }

/// Compare-exchange: the larger key to k[A], the smaller to k[B].
template <u32 A, u32 B> NETRA_HOST_DEVICE constexpr void router_cas(u64 (&k)[8]) {
  const u64 a = k[A], b = k[B];
  const bool swap = a < b;
  k[A] = swap ? b : a;
  k[B] = swap ? a : b;
}
/// Sorts 8 keys descending: the 19-comparator network for 8 inputs (depth 6).
NETRA_HOST_DEVICE constexpr void router_sort8(u64 (&k)[8]) {
  router_cas<0, 2>(k), router_cas<1, 3>(k), router_cas<4, 6>(k), router_cas<5, 7>(k);
  router_cas<0, 4>(k), router_cas<1, 5>(k), router_cas<2, 6>(k), router_cas<3, 7>(k);
  router_cas<0, 1>(k), router_cas<2, 3>(k), router_cas<4, 5>(k), router_cas<6, 7>(k);
  router_cas<2, 4>(k), router_cas<3, 5>(k);
  router_cas<1, 4>(k), router_cas<3, 6>(k);
  router_cas<1, 2>(k), router_cas<3, 4>(k), router_cas<5, 6>(k);
}
/// k (sorted descending) becomes the top 8 of k and q (both sorted descending, all 16 keys
/// distinct), sorted descending: max(k_i, q_(7-i)) is bitonic and holds the top 8; a bitonic merge
/// (distances 4, 2, 1) sorts it. Partner lanes that merge each other's lists get the same list.
NETRA_HOST_DEVICE constexpr void router_merge8(u64 (&k)[8], const u64 (&q)[8]) {
NETRA_UNROLL
  for (u32 i = 0; i < 8; ++i) k[i] = max_of(k[i], q[7 - i]);
  router_cas<0, 4>(k), router_cas<1, 5>(k), router_cas<2, 6>(k), router_cas<3, 7>(k);
  router_cas<0, 2>(k), router_cas<1, 3>(k), router_cas<4, 6>(k), router_cas<5, 7>(k);
  router_cas<0, 1>(k), router_cas<2, 3>(k), router_cas<4, 5>(k), router_cas<6, 7>(k);
}

}  // namespace netra::kernels
