// netra/dsl/cluster.hpp — workgroup clusters, target-neutral: workgroups launched together on one
// group of processors that may store into each other's LDS / shared memory.
//   sm90a:  thread-block clusters (up to 8 blocks portable, 16 with the non-portable attribute
//           the runtime sets for a kernel that declares `cluster_size` > 8, runtime/kernel_traits.hpp).
//           Pushes are st.async into the receiver's shared memory, completing transaction bytes
//           on an mbarrier there (the receiver waits for its bytes with bulk_copy_ops::wait).
//   gfx950: no clusters (gfx950::has_clusters is false); a contract maps such work to two kernels.
// Use: every workgroup initialises the barriers it receives on (bulk_copy_ops::init, expect_bytes
// with the bytes it will receive), then every thread calls arrive(); before its first push a
// thread calls wait() (the receivers' barriers are then initialised); a receiver waits on its
// barrier before it reads. A workgroup may exit once its pushes are issued; the receivers stay
// until their bytes have landed.
#pragma once
#include "netra/dsl/bulk_copy.hpp"
#include "netra/dsl/target.hpp"
#include "netra/dsl/vector_types.hpp"

#if defined(NETRA_COMPILER_CUDA)
#include "netra/dsl/arch/sm90a/cluster.hpp"
#endif

namespace netra {
template <class Target> struct cluster_ops {};
#if defined(NETRA_COMPILER_CUDA)
template <> struct cluster_ops<sm90a> {
  static NETRA_DEVICE u32 rank() { return sm90a_isa::cluster_cta_rank(); }
  static NETRA_DEVICE void arrive() { sm90a_isa::cluster_arrive_relaxed(); }
  static NETRA_DEVICE void wait() { sm90a_isa::cluster_wait(); }
  /// Stores 16 bytes at `lds` (an object of this workgroup's LDS layout) in workgroup `rank`,
  /// counted on that workgroup's barrier `b` (same layout). 16-byte aligned.
  static NETRA_DEVICE void push_16B(void* lds, u32 rank, u32x4 v, lds_copy_barrier& b) {
    sm90a_isa::st_async_v4_b32(sm90a_isa::cluster_map_shared(lds, rank), v[0], v[1], v[2], v[3],
                               sm90a_isa::cluster_map_shared(&b.state, rank));
  }
};
#endif
}  // namespace netra
