// netra/runtime/tactics/sampling.hpp — the dispatch lists of the sampling operations (host only):
// the contracts dispatch tries, in order, for one call. Instances in the build-time catalog
// (catalog/sampling.hpp) come embedded in libnetra; the others are JIT-compiled when a device's
// tactics are loaded (netra-prebuild fills the cache ahead of time).
#pragma once
#include <boost/hana.hpp>

#include "netra/contracts/argmax.hpp"
#include "netra/runtime/tactic.hpp"

namespace netra::tactics {

/// The promoted domain of an exact argmax contract: every call on its target with its row
/// length and a row count it serves (the article's batch range 1..128). Inside it a call that
/// does not match the contract's ABI (alignment, strides, pointers) is an error, never a
/// silent fallback to another implementation.
template <class Contract> struct argmax_rows_domain {
  static bool contains(const argmax_signature& s) {
    return s.target == Contract::target::id && s.cols == Contract::n && s.rows >= 1 && s.rows <= Contract::max_rows;
  }
};

template <class Target> using argmax_reference_strict = strict<contracts::argmax_reference<Target>, argmax_rows_domain<contracts::argmax_reference<Target>>>;

/// argmax: the article's exact vocabulary (built at build time, strict over rows 1..128), then a
/// 32768-logit vocabulary for up to 8 rows (JIT-compiled at startup).
inline constexpr auto argmax = boost::hana::tuple_t<argmax_reference_strict<gfx950>, argmax_reference_strict<sm90a>,
                                                    contracts::argmax<gfx950, 32768, 16, 8>, contracts::argmax<sm90a, 32768, 16, 8>>;

}  // namespace netra::tactics
