# Gated delta net (issue 27): conv update, precompute, K0 / M16 recurrent core, accepted-prefix
# replay. Host tests (oracle models, math, contracts, the code-object audit), negative compile
# tests, GPU tests (kernels vs oracles, the verify/commit protocol test). Included by
# tests/CMakeLists.txt.
#
# On a machine with an H200: ctest --test-dir <build> -R gdn --output-on-failure

netra_add_host_test(test_gdn_host
  contracts/test_gdn_contracts.cpp
  kernels/test_gdn_model.cpp
  kernels/test_gdn_math.cpp)
target_compile_options(test_gdn_host PRIVATE -O2)

# The conv's batch-ranged dispatch (tactics::gdn_conv): the instance each B gets, the rule texts.
netra_add_host_test(test_gdn_conv_dispatch runtime/test_gdn_conv_dispatch.cpp)

# The conv's branch-free SiLU division against IEEE division over all 2^32 FP32 inputs (threads).
netra_add_host_test(test_gdn_conv_silu kernels/test_gdn_conv_silu.cpp)
target_compile_options(test_gdn_conv_silu PRIVATE -O2)
find_package(Threads REQUIRED)
target_link_libraries(test_gdn_conv_silu PRIVATE Threads::Threads)

# The code objects read back: K0 stores only its outputs, gfx950 transcendental hazards, packed FP32.
if(TARGET netra_code_objects AND NETRA_LLVM_OBJDUMP AND NOT "gfx950" IN_LIST NETRA_SKIPPED_TARGETS AND NOT "sm90a" IN_LIST NETRA_SKIPPED_TARGETS)
  netra_add_host_test(test_gdn_audit kernels/test_gdn_audit.cpp)
  target_compile_definitions(test_gdn_audit PRIVATE NETRA_CODE_OBJECT_DIR="${NETRA_CODE_OBJECT_DIR}" NETRA_LLVM_OBJDUMP="${NETRA_LLVM_OBJDUMP}")
  add_dependencies(test_gdn_audit netra_code_objects)
  set_tests_properties(test_gdn_audit PROPERTIES LABELS audit)
endif()

netra_add_compile_fail_test(negative_gdn_value_block negative/gdn_value_block.cpp
  "netra::contracts::gdn_recurrent: field ValueBlock must be wave C / 4, wave C / 2 or wave C")
netra_add_compile_fail_test(negative_gdn_commit negative/gdn_commit.cpp
  "netra::contracts::gdn_recurrent: field Commit must be 0 \\(none\\), 1 \\(final\\) or 2 \\(accepted_prefix\\)")
netra_add_compile_fail_test(negative_gdn_waves_per_token negative/gdn_waves_per_token.cpp
  "netra::contracts::gdn_recurrent: field WavesPerWorkgroup must be 1 with Staging 0")
netra_add_compile_fail_test(negative_gdn_raw_inputs negative/gdn_raw_inputs.cpp
  "netra::contracts::gdn_recurrent: field Inputs must be 0 \\(precomputed\\), or 1 \\(raw\\) with a staged map")
netra_add_compile_fail_test(negative_gdn_conv_layout negative/gdn_conv_layout.cpp
  "netra::contracts::gdn_conv: field Layout must be 0 \\(channel_major")
netra_add_compile_fail_test(negative_gdn_conv_channels negative/gdn_conv_channels.cpp
  "netra::contracts::gdn_conv: field ChannelsPerThread must be 8 or 4")
netra_add_compile_fail_test(negative_gdn_conv_division negative/gdn_conv_division.cpp
  "netra::contracts::gdn_conv: field Division must be 0 \\(integer seed\\) or 1")
netra_add_compile_fail_test(negative_gdn_conv_window_stores negative/gdn_conv_window_stores.cpp
  "netra::contracts::gdn_conv: field WindowStores must be 0 \\(plain\\) or 1 \\(streaming, with Writes = windows\\)")
netra_add_compile_fail_test(negative_gdn_conv_silu negative/gdn_conv_silu.cpp
  "netra::contracts::gdn_conv: field Silu must be 0 \\(selects\\) or 1 \\(lean\\)")
netra_add_compile_fail_test(negative_gdn_max_batch negative/gdn_max_batch.cpp
  "netra::contracts::gdn_precompute: field MaxBatch must be in \\[1, 128\\]")

# The conv through its batch-ranged dispatch (tactics::gdn_conv) at every B 1..64, against the oracle.
netra_add_gpu_test(test_gdn_conv_dispatch_gpu gpu/test_gdn_conv_dispatch_gpu.cpp)

netra_add_gpu_test(test_gdn_gpu gpu/test_gdn_kernels_gpu.cpp gpu/test_gdn_protocol_gpu.cpp gpu/test_gdn_m16_chain_gpu.cpp)
if(TARGET test_gdn_gpu)
  target_compile_options(test_gdn_gpu PRIVATE -O2)
  find_package(Threads REQUIRED)
  target_link_libraries(test_gdn_gpu PRIVATE Threads::Threads)
endif()

# GPU benchmark driver (run by bench/gdn.py, not by ctest).
if(CUDAToolkit_FOUND)
  add_executable(netra-bench-gdn ${PROJECT_SOURCE_DIR}/bench/gdn_bench.cpp)
  target_link_libraries(netra-bench-gdn PRIVATE netra::netra ${CMAKE_DL_LIBS})
  target_include_directories(netra-bench-gdn PRIVATE ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_SOURCE_DIR} ${CUDAToolkit_INCLUDE_DIRS})
  target_compile_definitions(netra-bench-gdn PRIVATE NETRA_CODE_OBJECT_DIR="${NETRA_CODE_OBJECT_DIR}")
  target_compile_options(netra-bench-gdn PRIVATE ${NETRA_TEST_WARNINGS} -O2)
  if(TARGET netra_code_objects)
    add_dependencies(netra-bench-gdn netra_code_objects)
  endif()
endif()

# The C ABI (libnetra): the header as C99; on the GPU, the C path against the C++ one and refusals.
if(TARGET netra_runtime)
  add_test(NAME gdn_c_header_is_c
           COMMAND ${CMAKE_CXX_COMPILER} -x c -std=c99 -pedantic -Wall -Wextra -Werror -fsyntax-only -I${PROJECT_SOURCE_DIR}/include
                   ${CMAKE_CURRENT_SOURCE_DIR}/contracts/test_gdn_c_header.c)
  set_tests_properties(gdn_c_header_is_c PROPERTIES LABELS runtime)
  netra_add_gpu_test(test_gdn_c_abi_gpu gpu/test_gdn_c_abi_gpu.cpp)
  if(TARGET test_gdn_c_abi_gpu)
    target_link_libraries(test_gdn_c_abi_gpu PRIVATE netra::runtime)
    set_tests_properties(test_gdn_c_abi_gpu PROPERTIES LABELS "gpu;runtime")
  endif()
endif()
