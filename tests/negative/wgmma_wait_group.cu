#include <netra/dsl/arch/sm90a/mma.hpp>
extern "C" __global__ void k() { netra::sm90a_isa::wgmma_wait_group_sync_aligned<8>(); }
