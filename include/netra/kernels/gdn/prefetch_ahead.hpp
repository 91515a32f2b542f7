// netra/kernels/gdn/prefetch_ahead.hpp — the workgroup `distance` positions later in a launch's
// order (x fastest, then y, then z): the gdn kernels' mapping field PrefetchAhead asks for the L2
// prefetch of that workgroup's inputs while this one runs. A hint: no result depends on it.
#pragma once
#include "netra/dsl/config.hpp"

namespace netra::kernels::gdn_prefetch {
struct workgroup3 {
  u32 x, y, z;
  bool valid;
};
NETRA_HOST_DEVICE constexpr workgroup3 ahead(u32 x, u32 y, u32 z, u32 gx, u32 gy, u32 gz, u32 distance) {
  const u64 n = x + u64{gx} * (y + u64{gy} * z) + distance;
  if (distance == 0 || n >= u64{gx} * gy * gz) return {0, 0, 0, false};
  return {static_cast<u32>(n % gx), static_cast<u32>(n / gx % gy), static_cast<u32>(n / (u64{gx} * gy)), true};
}
}  // namespace netra::kernels::gdn_prefetch
