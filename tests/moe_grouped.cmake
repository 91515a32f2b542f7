# Grouped MoE experts for mid and large batches and the M768 split-K pair (issue 29 §3, §4):
# host model and contract tests, negative compile tests, the GPU test, the gfx950 disassembly check.
# Included by tests/CMakeLists.txt.

netra_add_host_test(test_moe_grouped_model kernels/test_moe_grouped_model.cpp)
target_compile_options(test_moe_grouped_model PRIVATE -O2)

# A GPU test over all 257 experts (tests/gpu/moe_expert_store.hpp: generated on 16 threads, the host
# oracles at -O2), linked with the extra libraries given.
function(netra_moe_store_gpu_test name source)
  netra_add_gpu_test(${name} ${source})
  if(TARGET ${name})
    target_compile_options(${name} PRIVATE -O2)
    find_package(Threads REQUIRED)
    target_link_libraries(${name} PRIVATE Threads::Threads ${ARGN})
  endif()
endfunction()
netra_moe_store_gpu_test(test_moe_grouped_gpu gpu/test_moe_grouped_gpu.cpp)

# Unsupported fields fail to compile with a message naming them (sources generated here).
function(netra_moe_grouped_compile_fail name contract regex)
  set(src ${CMAKE_CURRENT_BINARY_DIR}/negative_${name}.cpp)
  file(CONFIGURE OUTPUT ${src} CONTENT "#include <netra/contracts/moe/split_k_down.hpp>\n#include <netra/contracts/moe/grouped_gate_up.hpp>\ntemplate struct ${contract};\n")
  add_test(NAME negative_${name} COMMAND ${CMAKE_CXX_COMPILER} -std=c++20 -fsyntax-only -I${PROJECT_SOURCE_DIR}/include ${src})
  set_tests_properties(negative_${name} PROPERTIES PASS_REGULAR_EXPRESSION "${regex}" LABELS negative)
endfunction()
netra_moe_grouped_compile_fail(moe_grouped_tile "netra::contracts::moe_grouped_gate_up<netra::sm90a, 17, 256, 24>"
  "netra::contracts::moe_grouped_gate_up: field Tile must be 16, 32 or 64")
netra_moe_grouped_compile_fail(moe_grouped_tokens "netra::contracts::moe_grouped_gate_up<netra::sm90a, 17, 769, 16>"
  "netra::contracts::moe_grouped_gate_up: fields MinTokens, MaxTokens must satisfy")
netra_moe_grouped_compile_fail(moe_grouped_k_parts "netra::contracts::moe_grouped_down<netra::gfx950, 17, 256, 16, 4, 16>"
  "netra::contracts::moe_grouped_down: field KParts must be 1 \\(FP32 y\\) or 2")
netra_moe_grouped_compile_fail(moe_grouped_row_tiles "netra::contracts::moe_grouped_down<netra::gfx950, 17, 256, 16, 1, 3>"
  "netra::contracts::moe_grouped_down: field RowTiles must be 1, 2, 4, 8 or 16")
netra_moe_grouped_compile_fail(moe_grouped_down_stages "netra::contracts::moe_grouped_down<netra::sm90a, 17, 256, 16, 1, 4, 1>"
  "netra::contracts::moe_grouped_down: field WeightStages must be 0 \\(registers\\) or in \\[2, 4\\]")
netra_moe_grouped_compile_fail(moe_grouped_down_trim "netra::contracts::moe_grouped_down<netra::sm90a, 17, 256, 16, 1, 4, 4, 2>"
  "netra::contracts::moe_grouped_down: field Trim must be 0 \\(whole chunks\\) or 1")
netra_moe_grouped_compile_fail(moe_split_k_tokens "netra::contracts::moe_split_k_down<netra::gfx950, 512>"
  "netra::contracts::moe_split_k_down: field Tokens must be 768")

# The gfx950 code objects: MFMA present, every result read after the hazard recognizer's wait
# states (12 for 16x16x128), no scratch.
find_package(Python3 COMPONENTS Interpreter QUIET)
if(NETRA_CLANG AND NETRA_LLVM_OBJDUMP AND NETRA_LLVM_READELF AND Python3_FOUND AND TARGET netra_code_objects)
  add_test(NAME moe_grouped_gfx950_disassembly
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/tools/check_mfma_hazards.py --objdump ${NETRA_LLVM_OBJDUMP}
                   --readelf ${NETRA_LLVM_READELF} --min-wait-states 12
                   ${NETRA_CODE_OBJECT_DIR}/moe-grouped-gate-up-gfx950-17-256-16.hsaco
                   ${NETRA_CODE_OBJECT_DIR}/moe-grouped-gate-up-gfx950-257-768-64.hsaco
                   ${NETRA_CODE_OBJECT_DIR}/moe-grouped-down-gfx950-17-256-16-1-16.hsaco
                   ${NETRA_CODE_OBJECT_DIR}/moe-grouped-split-k-down-gfx950-768.hsaco)
  set_tests_properties(moe_grouped_gfx950_disassembly PROPERTIES LABELS audit)
endif()

# The benchmark driver (bench/moe_grouped.py runs it on the GPU).
if(CUDAToolkit_FOUND)
  add_executable(netra-bench-moe-grouped ${PROJECT_SOURCE_DIR}/bench/moe_grouped_bench.cpp)
  find_package(Threads REQUIRED)
  target_link_libraries(netra-bench-moe-grouped PRIVATE netra::netra Threads::Threads ${CMAKE_DL_LIBS})
  target_include_directories(netra-bench-moe-grouped PRIVATE ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_SOURCE_DIR} ${CUDAToolkit_INCLUDE_DIRS})
  target_compile_definitions(netra-bench-moe-grouped PRIVATE NETRA_CODE_OBJECT_DIR="${NETRA_CODE_OBJECT_DIR}")
  target_compile_options(netra-bench-moe-grouped PRIVATE ${NETRA_TEST_WARNINGS} -O2)
  if(TARGET netra_code_objects)
    add_dependencies(netra-bench-moe-grouped netra_code_objects)
  endif()
endif()

# The grouped experts through the dispatch path (libnetra's embedded code objects).
netra_add_gpu_test(test_moe_grouped_dispatch_gpu gpu/test_moe_grouped_dispatch_gpu.cpp)
if(TARGET test_moe_grouped_dispatch_gpu AND TARGET netra_runtime)
  target_link_libraries(test_moe_grouped_dispatch_gpu PRIVATE netra::runtime)
endif()

# The whole block through its dispatch path for token counts across 1..768 and the graph buckets
# (issue 29 §1): libnetra's embedded code objects, the host oracles on the block's own intermediates.
if(TARGET netra_runtime)
  netra_moe_store_gpu_test(test_moe_block_gpu gpu/test_moe_block_gpu.cpp netra::runtime)
endif()
