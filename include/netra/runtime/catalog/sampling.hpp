// netra/runtime/catalog/sampling.hpp — built-in sampling instances.
#pragma once
#include <boost/hana.hpp>

#include "netra/contracts/argmax.hpp"

namespace netra::catalog {
/// The article's exact argmax, for both targets.
inline constexpr auto argmax = boost::hana::tuple_t<contracts::argmax_reference<gfx950>, contracts::argmax_reference<sm90a>>;
inline constexpr auto sampling = argmax;
}  // namespace netra::catalog
