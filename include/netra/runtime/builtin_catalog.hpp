// netra/runtime/builtin_catalog.hpp — every contract instance netra compiles at build time,
// per operation, as Boost.Hana type lists (host only). The build compiles each to a code object,
// the audit checks each against its budget, and dispatch picks tactics from these lists.
#pragma once
#include <boost/hana.hpp>

#include "netra/contracts/argmax.hpp"
#include "netra/kernels/all.hpp"

namespace netra::catalog {
namespace hana = boost::hana;

/// Sampling: the article's exact argmax, for both targets.
inline constexpr auto argmax = hana::tuple_t<contracts::argmax_reference<gfx950>, contracts::argmax_reference<sm90a>>;

/// All built-in instances, in build and audit order.
inline constexpr auto all = argmax;

}  // namespace netra::catalog

namespace netra::kernels {
template <class... Kernels> constexpr auto as_hana_types(type_list<Kernels...>) { return boost::hana::tuple_t<Kernels...>; }
/// The kernels of a contract as a Hana tuple of types (launch order).
template <class Contract> constexpr auto kernel_types_of() { return as_hana_types(typename kernels_of<Contract>::type{}); }
}  // namespace netra::kernels
