// netra/runtime/tactics/sampling.hpp — the dispatch lists of the sampling operations (host only):
// the contracts dispatch tries, in order, for one call. Instances in the build-time catalog
// (catalog/sampling.hpp) come embedded in libnetra; the others are JIT-compiled when a device's
// tactics are loaded (netra-prebuild fills the cache ahead of time).
#pragma once
#include <boost/hana.hpp>

#include <type_traits>

#include "netra/contracts/argmax.hpp"
#include "netra/runtime/tactic.hpp"

namespace netra::tactics {

/// The promoted domain of an exact argmax contract: every call on its target with float32 logits
/// [rows, N] on the handle's device and a row count it serves (the article's batch range 1..128).
/// Inside it a call that does not match the contract's ABI (alignment, strides, out) is an error,
/// never a silent fallback to another implementation; other element types and devices are not
/// its calls (the caller's own argmax takes them).
template <class Contract> struct argmax_rows_domain {
  static bool contains(const argmax_signature& s) {
    return s.target == Contract::target::id && s.logits.device == s.device && s.logits.type == dtype::f32 && s.cols() == Contract::n &&
           s.rows() >= 1 && s.rows() <= Contract::max_rows;
  }
};

/// The instance that serves the article's vocabulary (N = 248320, rows 1..128) on a target.
/// gfx950: the reference contract (128 chunks, one wave64 per workgroup, as in the article).
/// sm90a: 320 chunks of 776 values, 4 warps per block — on the H200 (bench/results/argmax_h200.json,
/// revision 4da4360, graph-replayed) the fastest of 128 / 256 / 320 / 640 chunks at M = 16
/// (6.25 us against 6.72 for 128 chunks) and within run-to-run noise of the best at M = 1, 64, 128.
/// Every sm90a variant returns the same indices (exact); they differ in workspace size only.
/// MaxRows 768 serves a verify step's 12 rows per request for up to 64 requests: the same kernel
/// (one grid row per logits row), a workspace of 768 x Chunks keys.
template <class Target, u32 MaxRows = 128>
using argmax_served =
    std::conditional_t<same_v<Target, sm90a>, contracts::argmax<sm90a, 248320, 320, MaxRows>, contracts::argmax<Target, 248320, 128, MaxRows>>;
template <class Target, u32 MaxRows = 128>
using argmax_served_strict = strict<argmax_served<Target, MaxRows>, argmax_rows_domain<argmax_served<Target, MaxRows>>>;

/// argmax: the article's vocabulary (built at build time, strict over rows 1..128, then the verify
/// instance for rows 129..768), then a 32768-logit vocabulary for up to 8 rows (JIT-compiled at
/// startup).
inline constexpr auto argmax =
    boost::hana::tuple_t<argmax_served_strict<gfx950>, argmax_served_strict<sm90a>, argmax_served_strict<gfx950, 768>,
                         argmax_served_strict<sm90a, 768>, contracts::argmax<gfx950, 32768, 16, 8>, contracts::argmax<sm90a, 32768, 16, 8>>;

}  // namespace netra::tactics
