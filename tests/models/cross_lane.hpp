// tests/models/cross_lane.hpp — host models of the cross-lane instructions, written from the
// ISA documents, and of the DSL operations composed from them.
//   ds_bpermute_b32 (CDNA3/CDNA4 ISA, LDS "backward permute"): lane i reads the source VGPR of
//     lane (addr[i] >> 2) & 63; inactive source lanes read 0 (all lanes are active here).
//   shfl.sync.bfly.b32 d, a, b, c=0x1f (PTX ISA): j = lane ^ b; j <= maxLane (31) always holds
//     for c = 0x1f, so lane i reads a of lane i ^ b.
#pragma once
#include <array>
#include <cstdint>

#include "netra/dsl/target.hpp"

namespace netra::models {

template <unsigned W> using lanes = std::array<std::uint32_t, W>;

inline lanes<64> ds_bpermute_b32(const lanes<64>& byte_address, const lanes<64>& source) {
  lanes<64> out{};
  for (unsigned i = 0; i < 64; ++i) out[i] = source[(byte_address[i] >> 2) & 63u];
  return out;
}

inline lanes<32> shfl_sync_bfly_b32(const lanes<32>& source, std::uint32_t lane_mask) {
  lanes<32> out{};
  for (unsigned i = 0; i < 32; ++i) out[i] = source[i ^ (lane_mask & 31u)];
  return out;
}

/// target_ops<Target>::xor_shuffle as the instruction each target uses for it.
template <class Target> lanes<Target::wave_size> xor_shuffle(const lanes<Target::wave_size>& v, std::uint32_t mask) {
  if constexpr (Target::wave_size == 64) {
    lanes<64> address{};
    for (unsigned i = 0; i < 64; ++i) address[i] = (i ^ mask) << 2;  // amdgcn_ops::xor_shuffle
    return ds_bpermute_b32(address, v);
  } else {
    return shfl_sync_bfly_b32(v, mask);
  }
}

/// dsl::wave_max_u64<Target>: butterfly with masks 1, 2, ..., W/2, each 64-bit value moved as
/// two 32-bit shuffles (low word, then high word).
template <class Target> std::array<std::uint64_t, Target::wave_size> wave_max_u64(std::array<std::uint64_t, Target::wave_size> v) {
  constexpr unsigned W = Target::wave_size;
  for (std::uint32_t mask = 1; mask < W; mask <<= 1) {
    lanes<W> lo{}, hi{};
    for (unsigned i = 0; i < W; ++i) {
      lo[i] = static_cast<std::uint32_t>(v[i]);
      hi[i] = static_cast<std::uint32_t>(v[i] >> 32);
    }
    const auto plo = xor_shuffle<Target>(lo, mask), phi = xor_shuffle<Target>(hi, mask);
    for (unsigned i = 0; i < W; ++i) {
      const std::uint64_t partner = (std::uint64_t(phi[i]) << 32) | plo[i];
      v[i] = v[i] < partner ? partner : v[i];
    }
  }
  return v;
}

/// dsl::wave_sum_f32<Target> in its documented order (masks 1, 2, ..., W/2).
template <class Target> std::array<float, Target::wave_size> wave_sum_f32(std::array<float, Target::wave_size> v) {
  constexpr unsigned W = Target::wave_size;
  for (std::uint32_t mask = 1; mask < W; mask <<= 1) {
    lanes<W> bits{};
    for (unsigned i = 0; i < W; ++i) bits[i] = __builtin_bit_cast(std::uint32_t, v[i]);
    const auto p = xor_shuffle<Target>(bits, mask);
    for (unsigned i = 0; i < W; ++i) v[i] = v[i] + __builtin_bit_cast(float, p[i]);
  }
  return v;
}

}  // namespace netra::models
