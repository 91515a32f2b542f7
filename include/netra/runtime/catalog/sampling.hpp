// netra/runtime/catalog/sampling.hpp — built-in sampling instances.
#pragma once
#include <boost/hana.hpp>

#include "netra/contracts/argmax.hpp"

namespace netra::catalog {
/// The article's exact argmax, for both targets (the reference mapping first), plus the sm90a
/// alternatives the benchmark compares: 1 and 8 warps per block, and 256 (a tail chunk), 320 and
/// 640 chunks per row (shorter chunks, more warps at small M); the verify instances of 768 rows.
inline constexpr auto argmax =
    boost::hana::tuple_t<contracts::argmax_reference<gfx950>, contracts::argmax_reference<sm90a>,
                         contracts::argmax<sm90a, 248320, 128, 128, 1>, contracts::argmax<sm90a, 248320, 128, 128, 8>,
                         contracts::argmax<sm90a, 248320, 256, 128>, contracts::argmax<sm90a, 248320, 320, 128>,
                         contracts::argmax<sm90a, 248320, 640, 128>, contracts::argmax<gfx950, 248320, 128, 768>,
                         contracts::argmax<sm90a, 248320, 320, 768>>;
inline constexpr auto sampling = argmax;
}  // namespace netra::catalog
