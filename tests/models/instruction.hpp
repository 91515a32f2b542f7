// tests/models/instruction.hpp — one interface over the instruction models of tests/models/
// (mfma.hpp, mma_sync.hpp, matrix_bf16.hpp, mfma_bf16_gfx942.hpp, wmma.hpp), for tests generic over every fragment shape:
//   instruction_model<Shape>::run(a, b, c) -> d, with a / b every lane's register words and c / d
//   every lane's accumulator items (doubles; the FP8 models' float C and D are exact for the
//   small-integer data these tests use). 16x16x128 takes the byte order inside a lane as a
//   parameter (models/mfma.hpp: undocumented), `halves` by default.
#pragma once
#include <array>
#include <cstdint>

#include "models/matrix_bf16.hpp"
#include "models/mfma.hpp"
#include "models/mfma_bf16_gfx942.hpp"
#include "models/mma_sync.hpp"
#include "models/wmma.hpp"
#include "netra/dsl/matrix_fragment.hpp"
#include "netra/dsl/matrix_fragment_bf16.hpp"
#include "netra/dsl/matrix_fragment_targets.hpp"

namespace netra::models {

template <class Shape> struct instruction_registers {
  using a_type = std::array<std::array<std::uint32_t, Shape::a_words>, Shape::wave_size>;
  using b_type = std::array<std::array<std::uint32_t, Shape::b_words>, Shape::wave_size>;
  using d_type = std::array<std::array<double, Shape::d_items>, Shape::wave_size>;
};

template <class Shape, k_order_16x16x128 Order = k_order_16x16x128::halves> struct instruction_model;

namespace detail {
/// Runs an FP8 model with float accumulators on double ones.
template <class Shape, class D, class F> typename instruction_registers<Shape>::d_type run_float(const typename instruction_registers<Shape>::d_type& c, F f) {
  D cf{};
  for (unsigned l = 0; l < Shape::wave_size; ++l)
    for (unsigned i = 0; i < Shape::d_items; ++i) cf[l][i] = static_cast<float>(c[l][i]);
  const D df = f(cf);
  typename instruction_registers<Shape>::d_type d{};
  for (unsigned l = 0; l < Shape::wave_size; ++l)
    for (unsigned i = 0; i < Shape::d_items; ++i) d[l][i] = static_cast<double>(df[l][i]);
  return d;
}
}  // namespace detail

template <k_order_16x16x128 Order> struct instruction_model<::netra::mfma_f32_16x16x128_e4m3, Order> : instruction_registers<::netra::mfma_f32_16x16x128_e4m3> {
  static d_type run(const a_type& a, const b_type& b, const d_type& c) {
    return detail::run_float<::netra::mfma_f32_16x16x128_e4m3, lane_floats<4>>(c, [&](const lane_floats<4>& cf) { return v_mfma_f32_16x16x128_e4m3<Order>(a, b, cf); });
  }
};
template <k_order_16x16x128 Order> struct instruction_model<::netra::mfma_f32_32x32x64_e4m3, Order> : instruction_registers<::netra::mfma_f32_32x32x64_e4m3> {
  static d_type run(const a_type& a, const b_type& b, const d_type& c) {
    return detail::run_float<::netra::mfma_f32_32x32x64_e4m3, lane_floats<16>>(c, [&](const lane_floats<16>& cf) { return v_mfma_f32_32x32x64_e4m3(a, b, cf); });
  }
};
template <k_order_16x16x128 Order> struct instruction_model<::netra::mfma_f32_16x16x32_fp8_fp8, Order> : instruction_registers<::netra::mfma_f32_16x16x32_fp8_fp8> {
  static d_type run(const a_type& a, const b_type& b, const d_type& c) {
    return detail::run_float<::netra::mfma_f32_16x16x32_fp8_fp8, lane_floats<4>>(c, [&](const lane_floats<4>& cf) { return v_mfma_f32_16x16x32_fp8_fp8(a, b, cf); });
  }
};
template <k_order_16x16x128 Order> struct instruction_model<::netra::mma_m16n8k32_e4m3, Order> : instruction_registers<::netra::mma_m16n8k32_e4m3> {
  static d_type run(const a_type& a, const b_type& b, const d_type& c) {
    return detail::run_float<::netra::mma_m16n8k32_e4m3, warp_c>(c, [&](const warp_c& cf) { return mma_m16n8k32_e4m3(a, b, cf); });
  }
};
template <k_order_16x16x128 Order> struct instruction_model<::netra::mfma_f32_16x16x32_bf16, Order> : instruction_registers<::netra::mfma_f32_16x16x32_bf16> {
  static d_type run(const a_type& a, const b_type& b, const d_type& c) { return mfma_f32_16x16x32_bf16(a, b, c); }
};
template <k_order_16x16x128 Order> struct instruction_model<::netra::mfma_f32_16x16x16_bf16, Order> : instruction_registers<::netra::mfma_f32_16x16x16_bf16> {
  static d_type run(const a_type& a, const b_type& b, const d_type& c) { return mfma_f32_16x16x16_bf16(a, b, c); }
};
template <k_order_16x16x128 Order> struct instruction_model<::netra::mma_m16n8k16_bf16, Order> : instruction_registers<::netra::mma_m16n8k16_bf16> {
  static d_type run(const a_type& a, const b_type& b, const d_type& c) { return mma_m16n8k16_bf16(a, b, c); }
};
/// gfx1151 WMMA: a wave whose lanes 16..31 do not repeat lanes 0..15 has no defined result (NaN).
template <k_order_16x16x128 Order>
struct instruction_model<::netra::wmma_f32_16x16x16_bf16_w32, Order> : instruction_registers<::netra::wmma_f32_16x16x16_bf16_w32> {
  static d_type run(const a_type& a, const b_type& b, const d_type& c) {
    if (const auto d = v_wmma_f32_16x16x16_bf16_w32(a, b, c)) return *d;
    d_type nan{};
    for (auto& lane : nan) lane.fill(__builtin_nan(""));
    return nan;
  }
};

}  // namespace netra::models
