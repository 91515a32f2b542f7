// netra/dsl/arch/sm90a/ids.hpp — thread, block and lane ids from PTX special registers
// (no CUDA runtime headers needed; NVRTC-clean).
#pragma once
#include "netra/dsl/config.hpp"

namespace netra::sm90a_isa {
NETRA_DEVICE u32 tid_x() { u32 r; asm("mov.u32 %0, %%tid.x;" : "=r"(r)); return r; }
NETRA_DEVICE u32 ctaid_x() { u32 r; asm("mov.u32 %0, %%ctaid.x;" : "=r"(r)); return r; }
NETRA_DEVICE u32 ctaid_y() { u32 r; asm("mov.u32 %0, %%ctaid.y;" : "=r"(r)); return r; }
NETRA_DEVICE u32 ctaid_z() { u32 r; asm("mov.u32 %0, %%ctaid.z;" : "=r"(r)); return r; }
NETRA_DEVICE u32 laneid() { u32 r; asm("mov.u32 %0, %%laneid;" : "=r"(r)); return r; }
}  // namespace netra::sm90a_isa
