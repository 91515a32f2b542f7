// netra/dsl/ids.hpp — lane, wave, thread and workgroup ids, target-neutral.
// Workgroups are one-dimensional (x); grids may use x, y and z.
#pragma once
#include "netra/dsl/arch/target_ops.hpp"

namespace netra {
/// Index of the calling thread inside its workgroup.
template <class Target> NETRA_DEVICE u32 thread_id() { return target_ops<Target>::thread_id(); }
/// Index of the calling lane inside its wave (0 .. Target::wave_size - 1).
template <class Target> NETRA_DEVICE u32 lane_id() { return target_ops<Target>::lane_id(); }
/// Index of the calling wave inside its workgroup.
template <class Target> NETRA_DEVICE u32 wave_id() { return target_ops<Target>::thread_id() / Target::wave_size; }
/// Workgroup (block) index along grid dimension Dim (0 = x, 1 = y, 2 = z).
template <class Target, int Dim> NETRA_DEVICE u32 workgroup_id() { return target_ops<Target>::template workgroup_id<Dim>(); }
}  // namespace netra
