// netra/contracts/staging.hpp — where a kernel keeps the operand bytes it streams while they are
// in flight: a contract field (Staging), with the target's default.
//   registers (0):     every lane loads its own 16-byte pieces into registers (VGPRs); the
//                      bytes in flight cost registers, so fewer workgroups fit.
//   lds_bulk_copy (1): the copy engine copies whole tiles into LDS / shared memory on an LDS
//                      barrier (dsl/bulk_copy.hpp; targets with has_bulk_copy); lanes then read
//                      their pieces from LDS (dsl/fragment/lds_tile.hpp).
// Both give the same bits: the same bytes reach the same instruction registers.
#pragma once
#include "netra/dsl/target.hpp"

namespace netra {

namespace staging {
inline constexpr u32 registers = 0;
inline constexpr u32 lds_bulk_copy = 1;
}  // namespace staging

/// Today's default: the copy engine where the target has one (sm90a), else registers (gfx950).
template <class Target> inline constexpr u32 default_staging = Target::has_bulk_copy ? staging::lds_bulk_copy : staging::registers;

}  // namespace netra
