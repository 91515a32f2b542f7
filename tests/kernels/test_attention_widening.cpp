// The sm90a integer E4M3 -> BF16 widening (dsl/arch/sm90a/convert_e4m3.hpp,
// sm90a_isa::widen_e4m3x2_bf16x2_integer) stepped on the host: the same bits as
// e4m3x4_to_bf16x4_reference for every byte pair in both halves of a word (NaN -> 0x7FFF, -0 kept,
// subnormal codes exact). bench/attention_read_floor.cu checks the instructions themselves on the
// H200 over the same patterns.
#include <doctest/doctest.h>

#include <cstddef>
#include <cstdint>

#include "netra/dsl/convert_e4m3_bf16.hpp"

using namespace netra;

namespace {
/// The steps of sm90a_isa::widen_e4m3x2_bf16x2_integer (dsl/arch/sm90a/convert_e4m3.hpp) on the
/// host: prmt (default mode: selector nibble bit 3 replicates the picked byte's sign), and, mad.lo,
/// shl, xor, and fma.rn.bf16x2 by 2^120 (exact here: FP32 holds every product, the sum is a BF16).
std::uint32_t prmt_model(std::uint32_t a, std::uint32_t b, std::uint32_t sel) {
  const std::uint64_t bytes = a | (static_cast<std::uint64_t>(b) << 32);
  std::uint32_t r = 0;
  for (unsigned i = 0; i < 4; ++i) {
    const unsigned nib = (sel >> (4 * i)) & 0xF;
    std::uint32_t byte = static_cast<std::uint32_t>(bytes >> (8 * (nib & 7))) & 0xFF;
    if (nib & 8) byte = (byte & 0x80) ? 0xFF : 0x00;
    r |= byte << (8 * i);
  }
  return r;
}
std::uint16_t fma_bf16_model(std::uint16_t a, std::uint16_t b, std::uint16_t c) {
  const float r = f32_from_bf16(a) * f32_from_bf16(b) + f32_from_bf16(c);  // exact: a * 2^120 is an FP32, + -0 or NaN
  return bf16_from_f32_reference(r);
}
std::uint32_t widen_integer_model(std::uint32_t word, unsigned pair) {
  const std::uint32_t marks = (word & 0x7F7F7F7Fu) + 0x01010101u;
  std::uint32_t x = prmt_model(word, 0, pair == 0 ? 0x4140u : 0x4342u);
  const std::uint32_t s = x & 0x00800080u;
  x = (s * 15u + x) << 4;
  const std::uint32_t c = prmt_model(marks, 0, pair == 0 ? 0x9988u : 0xBBAAu) ^ 0x80008000u;
  std::uint32_t r = 0;
  for (unsigned h = 0; h < 2; ++h)
    r |= static_cast<std::uint32_t>(fma_bf16_model(static_cast<std::uint16_t>(x >> (16 * h)), 0x7B80, static_cast<std::uint16_t>(c >> (16 * h))))
         << (16 * h);
  return r;
}
}  // namespace

TEST_CASE("the integer E4M3 -> BF16 widening (sm90a) gives the reference's bits for every byte pair in both halves") {
  std::size_t differ = 0;
  for (std::uint32_t i = 0; i < 65536; ++i) {
    const std::uint32_t words[2] = {i | (i << 16), ((i >> 8) | ((i & 0xFF) << 8)) | (i << 16)};
    for (const std::uint32_t w : words) {
      const bf16x4 want = e4m3x4_to_bf16x4_reference(w);
      differ += widen_integer_model(w, 0) != want.lo;
      differ += widen_integer_model(w, 1) != want.hi;
    }
  }
  CHECK(differ == 0);
  CHECK(widen_integer_model(0x807F00FFu, 0) == 0x00007FFFu);  // E4M3 NaN 0xFF -> 0x7FFF, +0 stays +0
  CHECK(widen_integer_model(0x807F00FFu, 1) == 0x80007FFFu);  // NaN 0x7F -> 0x7FFF, -0 stays -0
  CHECK(widen_integer_model(0x01800000u, 1) == 0x3B008000u);  // 0x01 = 2^-9 (a subnormal code)
}
