// netra/dsl/fragment.hpp — the fragment/tile layer (dsl/fragment/): operand-piece maps derived
// from the matrix shapes' element maps, block tiles, register tiles and their products, LDS tiles
// with a bank model, block-scaled accumulation, and each target's matrix instructions.
#pragma once
#include "netra/dsl/fragment/block_scaled.hpp"
#include "netra/dsl/fragment/block_tile.hpp"
#include "netra/dsl/fragment/lds_tile.hpp"
#include "netra/dsl/fragment/operand_pieces.hpp"
#include "netra/dsl/fragment/register_tile.hpp"
#include "netra/dsl/fragment/target_shapes.hpp"
