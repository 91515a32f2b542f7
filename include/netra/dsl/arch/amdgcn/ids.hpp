// netra/dsl/arch/amdgcn/ids.hpp — work-item and workgroup ids from the amdgcn builtins
// (no device libraries: the ockl functions the HIP headers call are not linked).
#pragma once
#include "netra/dsl/config.hpp"

namespace netra::amdgcn_isa {
NETRA_DEVICE u32 workitem_id_x() { return __builtin_amdgcn_workitem_id_x(); }
NETRA_DEVICE u32 workgroup_id_x() { return __builtin_amdgcn_workgroup_id_x(); }
NETRA_DEVICE u32 workgroup_id_y() { return __builtin_amdgcn_workgroup_id_y(); }
NETRA_DEVICE u32 workgroup_id_z() { return __builtin_amdgcn_workgroup_id_z(); }
/// v_mbcnt_lo/hi over a full mask: the lane's index inside its wave64.
NETRA_DEVICE u32 mbcnt_lane() { return __builtin_amdgcn_mbcnt_hi(~0u, __builtin_amdgcn_mbcnt_lo(~0u, 0u)); }
}  // namespace netra::amdgcn_isa
