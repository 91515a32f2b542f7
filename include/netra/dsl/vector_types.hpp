// netra/dsl/vector_types.hpp — the 16-byte register vector every target loads and stores.
#pragma once
#include "netra/dsl/config.hpp"

namespace netra {
/// Four 32-bit lanes of one 16-byte access, as raw bits. Kernels reinterpret the words
/// (float, packed bf16, packed fp8) with bit_cast on scalars, never on vector elements
/// (clang: bit_cast of an ext_vector element reads element 0, llvm-project #95673).
struct alignas(16) u32x4 {
  u32 x, y, z, w;
  NETRA_HOST_DEVICE constexpr u32 operator[](int i) const { return i == 0 ? x : i == 1 ? y : i == 2 ? z : w; }
};
static_assert(sizeof(u32x4) == 16, "netra: u32x4 must be 16 bytes");

/// Cache policy of a vector access. `streaming`: data read once (non-temporal on gfx950,
/// L1::no_allocate on sm90a's read-only path), or written once and not read again soon (stores:
/// the nontemporal store on gfx9, st.global.cs, evict first, on sm90a); `normal`: default caching. `streaming_early`:
/// read once, and the load stays where the kernel issues it: sm90a uses the coherent path
/// (ld.global.L1::no_allocate), because ptxas treats read-only-path (.nc) loads as movable and
/// sinks them to their first use (past barriers and griddepcontrol.wait), which serialises the
/// latency a kernel meant to overlap — and, by the same token, nothing keeps an .nc load of a
/// predecessor's output after griddepcontrol.wait; gfx950: as `streaming`.
enum class cache_policy : u8 { normal, streaming, streaming_early };
}  // namespace netra
