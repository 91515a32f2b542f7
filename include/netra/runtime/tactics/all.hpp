// netra/runtime/tactics/all.hpp — every dispatch list, flattened (host only): netra-prebuild
// walks it to JIT-compile the tactics of a family ahead of time. One header per operation
// family under runtime/tactics/.
#pragma once
#include <boost/hana.hpp>

#include "netra/kernels/all.hpp"
#include "netra/runtime/tactics/gdn.hpp"
#include "netra/runtime/tactics/moe_experts.hpp"
#include "netra/runtime/tactics/moe_grouped.hpp"
#include "netra/runtime/tactics/moe_routing.hpp"
#include "netra/runtime/tactics/norm.hpp"
#include "netra/runtime/tactics/sampling.hpp"

namespace netra::tactics {
inline constexpr auto all = boost::hana::flatten(boost::hana::make_tuple(argmax, moe_expert_gate_up, moe_expert_down, moe_grouped_plan, moe_grouped_gate_up, moe_grouped_down, moe_grouped_reduce, moe_act_quant, moe_router, moe_shared_gate, norm, gdn_conv, gdn_precompute, gdn_verify, gdn_m16, gdn_replay));
}  // namespace netra::tactics
