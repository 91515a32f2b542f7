// netra/dsl/target.hpp — targets are types.
//
// A contract names its target explicitly (`netra::gfx950`, `netra::sm90a`); nothing decides a
// target from compiler macros. The traits below are the hardware facts kernels and contracts
// derive their mappings and budgets from. gfx942 and gfx1151 are built and audited (never run) for
// the contracts that admit them (is_audit_only_target_v); the others refuse them with a message.
#pragma once
#include "netra/dsl/config.hpp"

namespace netra {

enum class vendor : u8 { amd, nvidia };
enum class target_id : u8 { gfx90a, gfx942, gfx950, gfx1151, sm90a };

/// AMD Instinct MI350X (CDNA4). wave64, OCP FP8 (E4M3FN), 160 KiB LDS per CU.
struct gfx950 {
  static constexpr target_id id = target_id::gfx950;
  static constexpr vendor maker = vendor::amd;
  static constexpr const char* name = "gfx950";
  static constexpr const char* spelling = "netra::gfx950";
  static constexpr u32 wave_size = 64;
  static constexpr u32 lds_bytes_per_workgroup = 160u * 1024u;
  static constexpr u32 max_vgprs = 256;  // architectural VGPRs per lane
  static constexpr u32 max_agprs = 256;  // accumulation VGPRs per lane (unified file of 512)
  static constexpr u32 max_sgprs = 102;
  static constexpr u32 max_workgroup_size = 1024;
  static constexpr u32 compute_units = 256;
  static constexpr bool fp8_is_ocp = true;  // E4M3FN: bias 7, max 448, NaN S.1111.111
  static constexpr u32 lds_banks = 64;       // 4-byte LDS banks (docs/target-notes.md §3: inferred, not checked)
  // Capabilities (kernels and contracts branch on these, never on the target's name):
  static constexpr bool has_bulk_copy = false;                      // async global -> LDS copies on an LDS barrier (dsl/bulk_copy.hpp)
  static constexpr bool has_programmatic_dependent_launch = false;  // a successor launches before its predecessor ends (dsl/sync.hpp)
  static constexpr bool has_clusters = false;                       // workgroup clusters with remote LDS stores (dsl/cluster.hpp)
  static constexpr bool has_warpgroup_mma = false;                 // matrix products issued by 4 waves from LDS (dsl/warpgroup_mma.hpp)
  static constexpr bool has_l2_prefetch = false;                    // an L2 prefetch hint instruction (dsl/prefetch.hpp)
};

/// AMD Instinct MI250X (CDNA2). wave64, no FP8. Built only so that CI exercises real hipRTC
/// compilation (Debian's hipRTC 5.2 targets gfx90a, not gfx942/gfx950).
struct gfx90a {
  static constexpr target_id id = target_id::gfx90a;
  static constexpr vendor maker = vendor::amd;
  static constexpr const char* name = "gfx90a";
  static constexpr const char* spelling = "netra::gfx90a";
  static constexpr u32 wave_size = 64;
  static constexpr u32 lds_bytes_per_workgroup = 64u * 1024u;
  static constexpr u32 max_vgprs = 256;
  static constexpr u32 max_agprs = 256;
  static constexpr u32 max_sgprs = 102;
  static constexpr u32 max_workgroup_size = 1024;
  static constexpr u32 compute_units = 220;
  static constexpr bool fp8_is_ocp = false;
  // Capabilities (kernels and contracts branch on these, never on the target's name):
  static constexpr bool has_bulk_copy = false;                      // async global -> LDS copies on an LDS barrier (dsl/bulk_copy.hpp)
  static constexpr bool has_programmatic_dependent_launch = false;  // a successor launches before its predecessor ends (dsl/sync.hpp)
  static constexpr bool has_clusters = false;                       // workgroup clusters with remote LDS stores (dsl/cluster.hpp)
  static constexpr bool has_warpgroup_mma = false;                 // matrix products issued by 4 waves from LDS (dsl/warpgroup_mma.hpp)
  static constexpr bool has_l2_prefetch = false;                    // an L2 prefetch hint instruction (dsl/prefetch.hpp)
};

/// AMD Instinct MI300X (CDNA3). wave64, 64 KiB LDS, MFMA without gfx950's scaled FP8 forms; FP8 is
/// the FNUZ flavour (dsl/fp8_format.hpp), so no FP8 contract written for gfx950 carries over.
struct gfx942 {
  static constexpr target_id id = target_id::gfx942;
  static constexpr vendor maker = vendor::amd;
  static constexpr const char* name = "gfx942";
  static constexpr const char* spelling = "netra::gfx942";
  static constexpr u32 wave_size = 64;
  static constexpr u32 lds_bytes_per_workgroup = 64u * 1024u;
  static constexpr u32 max_vgprs = 256;
  static constexpr u32 max_agprs = 256;
  static constexpr u32 max_sgprs = 102;
  static constexpr u32 max_workgroup_size = 1024;
  static constexpr u32 compute_units = 304;
  static constexpr u32 lds_banks = 32;        // 4-byte LDS banks (docs/target-notes.md §11: from AMD's CDNA documentation, not checked)
  static constexpr bool fp8_is_ocp = false;
  // Capabilities (kernels and contracts branch on these, never on the target's name):
  static constexpr bool has_bulk_copy = false;                      // async global -> LDS copies on an LDS barrier (dsl/bulk_copy.hpp)
  static constexpr bool has_programmatic_dependent_launch = false;  // a successor launches before its predecessor ends (dsl/sync.hpp)
  static constexpr bool has_clusters = false;                       // workgroup clusters with remote LDS stores (dsl/cluster.hpp)
  static constexpr bool has_warpgroup_mma = false;                 // matrix products issued by 4 waves from LDS (dsl/warpgroup_mma.hpp)
  static constexpr bool has_l2_prefetch = false;                    // an L2 prefetch hint instruction (dsl/prefetch.hpp)
};

/// Ryzen AI Max+ (RDNA 3.5). wave32 (the compiler's default), WMMA instead of MFMA, no AGPRs, no
/// FP8 or BF16 conversion instructions (netra converts in software).
struct gfx1151 {
  static constexpr target_id id = target_id::gfx1151;
  static constexpr vendor maker = vendor::amd;
  static constexpr const char* name = "gfx1151";
  static constexpr const char* spelling = "netra::gfx1151";
  static constexpr u32 wave_size = 32;
  static constexpr u32 lds_bytes_per_workgroup = 64u * 1024u;
  static constexpr u32 max_vgprs = 256;
  static constexpr u32 max_agprs = 0;
  static constexpr u32 max_sgprs = 106;
  static constexpr u32 max_workgroup_size = 1024;
  static constexpr u32 compute_units = 40;
  static constexpr u32 lds_banks = 32;        // 4-byte LDS banks of a CU's half of the WGP's LDS (docs/target-notes.md §11: inferred, not checked)
  static constexpr bool fp8_is_ocp = true;
  // Capabilities (kernels and contracts branch on these, never on the target's name):
  static constexpr bool has_bulk_copy = false;                      // async global -> LDS copies on an LDS barrier (dsl/bulk_copy.hpp)
  static constexpr bool has_programmatic_dependent_launch = false;  // a successor launches before its predecessor ends (dsl/sync.hpp)
  static constexpr bool has_clusters = false;                       // workgroup clusters with remote LDS stores (dsl/cluster.hpp)
  static constexpr bool has_warpgroup_mma = false;                 // matrix products issued by 4 waves from LDS (dsl/warpgroup_mma.hpp)
  static constexpr bool has_l2_prefetch = false;                    // an L2 prefetch hint instruction (dsl/prefetch.hpp)
};

/// NVIDIA H200 (Hopper, compute capability 9.0, arch-specific features: wgmma, setmaxnreg).
/// warp32; "wave" in netra means a warp here.
struct sm90a {
  static constexpr target_id id = target_id::sm90a;
  static constexpr vendor maker = vendor::nvidia;
  static constexpr const char* name = "sm90a";  // compilers call it sm_90a
  static constexpr const char* spelling = "netra::sm90a";
  static constexpr u32 wave_size = 32;
  static constexpr u32 lds_bytes_per_workgroup = 227u * 1024u;  // opt-in dynamic shared memory
  static constexpr u32 lds_reserved_per_workgroup = 1024;        // of the SM's 228 KiB, per resident block
  static constexpr u32 max_registers = 255;                     // per thread
  static constexpr u32 registers_per_processor = 65536;         // the SM's register file (32-bit registers)
  static constexpr u32 max_workgroup_size = 1024;
  static constexpr u32 compute_units = 132;  // SMs on H200 SXM
  static constexpr u32 lds_banks = 32;        // 4-byte shared-memory banks
  static constexpr bool fp8_is_ocp = true;
  // Capabilities (kernels and contracts branch on these, never on the target's name):
  static constexpr bool has_bulk_copy = true;                      // cp.async.bulk into shared memory on an mbarrier
  static constexpr bool has_programmatic_dependent_launch = true;  // griddepcontrol.wait / launch_dependents
  static constexpr bool has_clusters = true;                       // thread-block clusters, st.async into a peer's shared memory
  static constexpr bool has_warpgroup_mma = true;                  // wgmma.mma_async: 4 warps, operands from shared memory
  static constexpr bool has_l2_prefetch = true;                    // cp.async.bulk.prefetch.L2
};

/// Any declared target type.
template <class T>
concept target = same_v<T, gfx90a> || same_v<T, gfx950> || same_v<T, gfx942> || same_v<T, gfx1151> || same_v<T, sm90a>;

/// The targets netra builds kernels for today: gfx950 and sm90a are the product targets;
/// gfx90a is a JIT test target (hipRTC in CI) for contracts that need no FP8 or matrix units.
template <class T> inline constexpr bool is_built_target_v = same_v<T, gfx950> || same_v<T, sm90a>;
template <class T> inline constexpr bool is_rtc_test_target_v = same_v<T, gfx90a>;
/// Targets whose code objects are built and audited in CI but never run (no such GPU here): the
/// contracts that admit them say so in their Target check (docs/target-notes.md, gfx942 / gfx1151).
template <class T> inline constexpr bool is_audit_only_target_v = same_v<T, gfx942> || same_v<T, gfx1151>;
template <class T> inline constexpr bool is_amd_v = T::maker == vendor::amd;
template <class T> inline constexpr bool is_nvidia_v = T::maker == vendor::nvidia;
/// The capabilities as variable templates (the spellings kernels used before they were members).
template <class T> inline constexpr bool has_bulk_copy_v = T::has_bulk_copy;
template <class T> inline constexpr bool has_programmatic_dependent_launch_v = T::has_programmatic_dependent_launch;
template <class T> inline constexpr bool has_clusters_v = T::has_clusters;

/// LDS one processor sets aside per resident workgroup (sm90a: 1 KiB a block; AMD targets: none).
template <class T> constexpr u32 lds_reserved_per_workgroup() {
  if constexpr (requires { T::lds_reserved_per_workgroup; }) return T::lds_reserved_per_workgroup;
  else return 0;
}
/// Workgroups of `bytes` LDS each (static + dynamic) that one processor holds at once, by LDS alone.
template <class T> constexpr u32 workgroups_by_lds(u32 bytes) {
  return (T::lds_bytes_per_workgroup + lds_reserved_per_workgroup<T>()) / (bytes + lds_reserved_per_workgroup<T>());
}

/// Workgroups of `threads` threads each that one processor holds at once by registers alone when
/// every thread may take the target's cap (sm90a: 255 registers, allocated as 256, of the SM's 64 Ki);
/// targets without registers_per_processor: no bound here.
template <class T> constexpr u32 workgroups_by_registers(u32 threads) {
  if constexpr (requires { T::registers_per_processor; }) return T::registers_per_processor / (256u * threads);
  else return ~0u;
}

NETRA_HOST_DEVICE constexpr const char* target_name(target_id t) {
  switch (t) {
    case target_id::gfx90a: return "gfx90a";
    case target_id::gfx942: return "gfx942";
    case target_id::gfx950: return "gfx950";
    case target_id::gfx1151: return "gfx1151";
    case target_id::sm90a: return "sm90a";
  }
  return "unknown";
}

}  // namespace netra
