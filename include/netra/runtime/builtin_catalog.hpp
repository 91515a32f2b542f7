// netra/runtime/builtin_catalog.hpp — every contract instance netra compiles at build time, as
// Boost.Hana type lists (host only). The build compiles each to a code object, the audit checks
// each against its budget, dispatch picks tactics from the per-operation lists.
// One header per operation family under runtime/catalog/.
#pragma once
#include <boost/hana.hpp>

#include "netra/kernels/all.hpp"
#include "netra/runtime/catalog/attention.hpp"
#include "netra/runtime/catalog/decode_step.hpp"
#include "netra/runtime/catalog/gdn.hpp"
#include "netra/runtime/catalog/moe_experts.hpp"
#include "netra/runtime/catalog/moe_grouped.hpp"
#include "netra/runtime/catalog/moe_routing.hpp"
#include "netra/runtime/catalog/norm.hpp"
#include "netra/runtime/catalog/sampling.hpp"
#include "netra/runtime/catalog/targets.hpp"

namespace netra::catalog {
/// All built-in instances, in build and audit order.
inline constexpr auto all = boost::hana::flatten(boost::hana::make_tuple(sampling, moe_routing, moe_experts, moe_grouped, norm, gdn, attention, decode_step, audit_only_targets));
}  // namespace netra::catalog

namespace netra::kernels {
template <class... Kernels> constexpr auto as_hana_types(type_list<Kernels...>) { return boost::hana::tuple_t<Kernels...>; }
/// The kernels of a contract as a Hana tuple of types (launch order).
template <class Contract> constexpr auto kernel_types_of() { return as_hana_types(typename kernels_of<Contract>::type{}); }
}  // namespace netra::kernels
