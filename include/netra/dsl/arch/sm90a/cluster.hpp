// netra/dsl/arch/sm90a/cluster.hpp — thread-block clusters on sm_90: the rank of a block in its
// cluster, the cluster barrier, and stores into another block's shared memory that complete on
// an mbarrier there (distributed shared memory, PTX ISA 8.1).
#pragma once
#include "netra/dsl/config.hpp"

#if defined(NETRA_COMPILER_CUDA)
#include "netra/dsl/arch/sm90a/bulk_copy.hpp"
namespace netra::sm90a_isa {
/// %cluster_ctarank: this block's rank in its cluster.
NETRA_DEVICE u32 cluster_cta_rank() {
  u32 r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}
/// barrier.cluster.arrive.relaxed.aligned: this thread arrives (every thread of the cluster must
/// arrive once per phase); what it wrote before is not ordered for the others (use it after
/// fence.mbarrier_init, which orders barrier initialisations itself).
NETRA_DEVICE void cluster_arrive_relaxed() { asm volatile("barrier.cluster.arrive.relaxed.aligned;" ::: "memory"); }
/// barrier.cluster.wait.aligned: waits for every thread of the cluster to arrive (acquire).
NETRA_DEVICE void cluster_wait() { asm volatile("barrier.cluster.wait.aligned;" ::: "memory"); }
/// mapa: the shared::cluster address of the object at `local` in the block of rank `rank`.
NETRA_DEVICE u32 cluster_map_shared(const void* local, u32 rank) {
  u32 r;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(r) : "r"(shared_address(local)), "r"(rank));
  return r;
}
/// st.async of 16 bytes into shared::cluster memory, completing 16 transaction bytes on the
/// mbarrier at `remote_barrier` (a shared::cluster address in the same block as `remote`).
NETRA_DEVICE void st_async_v4_b32(u32 remote, u32 a, u32 b, u32 c, u32 d, u32 remote_barrier) {
  asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.b32 [%0], {%1, %2, %3, %4}, [%5];" ::"r"(remote), "r"(a), "r"(b),
               "r"(c), "r"(d), "r"(remote_barrier)
               : "memory");
}
}  // namespace netra::sm90a_isa
#endif
