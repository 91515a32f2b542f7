// netra/dsl/arch/sm90a/bulk_copy.hpp — the copy engine's global -> shared-memory bulk copy on
// sm_90 and the mbarrier it completes on (transaction counting: the barrier's phase completes
// once its expected arrivals have arrived and the announced bytes have landed).
#pragma once
#include "netra/dsl/config.hpp"

#if defined(NETRA_COMPILER_CUDA)
#include "netra/dsl/arch/sm90a/sync.hpp"
namespace netra::sm90a_isa {
NETRA_DEVICE u32 shared_address(const void* p) { return static_cast<u32>(__cvta_generic_to_shared(p)); }

/// mbarrier.init with `arrivals` expected arrivals per phase, then the fence that makes the
/// initialisation visible to the async proxy (the copy engine).
NETRA_DEVICE void mbarrier_init(u64* barrier, u32 arrivals) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n\tfence.mbarrier_init.release.cluster;" ::"r"(shared_address(barrier)),
               "r"(arrivals)
               : "memory");
}
/// One arrival that also announces `bytes` more bytes for the current phase.
NETRA_DEVICE void mbarrier_arrive_expect_tx(u64* barrier, u32 bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(shared_address(barrier)), "r"(bytes) : "memory");
}
/// Returns once the phase of parity `parity` has completed (try_wait suspends the thread for a
/// system-dependent time before it answers false; the loop re-asks).
NETRA_DEVICE void mbarrier_wait_parity(u64* barrier, u32 parity) {
  asm volatile(
      "{\n\t.reg .pred done;\n"
      "wait_%=:\n\t"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n\t"
      "@!done bra wait_%=;\n\t}" ::"r"(shared_address(barrier)),
      "r"(parity)
      : "memory");
}
/// cp.async.bulk global -> shared, completing `bytes` transactions on `barrier`. Both addresses
/// 16-byte aligned, bytes a multiple of 16.
NETRA_DEVICE void cp_async_bulk_shared_global(void* destination, const void* source, u32 bytes, u64* barrier) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(shared_address(destination)),
               "l"(source), "r"(bytes), "r"(shared_address(barrier))
               : "memory");
}
}  // namespace netra::sm90a_isa
#endif
