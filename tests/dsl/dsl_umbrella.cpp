// netra/dsl.hpp compiles as one unit under each compiler that reads the DSL (the host compiler,
// nvcc for sm_90a, clang for gfx950): tests/moe_experts.cmake runs this file through each.
#include "netra/dsl.hpp"

static_assert(netra::sm90a::has_bulk_copy && !netra::gfx950::has_bulk_copy, "netra: capabilities are members of the target types");
