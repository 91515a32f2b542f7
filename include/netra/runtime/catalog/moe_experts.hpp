// netra/runtime/catalog/moe_experts.hpp — built-in MoE expert-projection instances (issue 4 §4):
// the decode gate_up (hidden quantization fused; each workgroup scanning the route ids, a unit
// list made first, or on sm90a a resident grid listing the units itself; the sm90a unit list is
// built too, for its GPU test and for callers who name it) and down (weighted route sum fused; E4M3 input
// from act_quant, or gate_up's BF16 with act_quant fused) for up to 16 tokens, both targets.
#pragma once
#include <boost/hana.hpp>

#include "netra/contracts/moe/expert_down.hpp"
#include "netra/contracts/moe/expert_gate_up.hpp"

namespace netra::catalog {
inline constexpr auto moe_experts =
    boost::hana::tuple_t<contracts::moe_expert_gate_up_decode<gfx950>, contracts::moe_expert_gate_up_decode<sm90a>,
                         contracts::moe_expert_gate_up_units_decode<gfx950>, contracts::moe_expert_gate_up_units_decode<sm90a>,
                         contracts::moe_expert_gate_up<sm90a, 16, gate_up_schedule::unit_list>,
                         contracts::moe_expert_down_decode<gfx950>, contracts::moe_expert_down_decode<sm90a>,
                         contracts::moe_expert_down_fused_decode<gfx950>, contracts::moe_expert_down_fused_decode<sm90a>,
                         // the gfx950 staging (weights in registers) on sm90a, so that the H200 runs that path (GPU tests)
                         contracts::moe_expert_gate_up<sm90a, 16, gate_up_schedule::route_scan, staging::registers>,
                         contracts::moe_expert_gate_up<sm90a, 16, gate_up_schedule::unit_list, staging::registers>,
                         contracts::moe_expert_gate_up<sm90a, 16, gate_up_schedule::resident, staging::registers>,
                         contracts::moe_expert_down<sm90a, 16, moe_down_input_e4m3, staging::registers>,
                         contracts::moe_expert_down<sm90a, 4, moe_down_input_gate_up, staging::registers>>;
}  // namespace netra::catalog
