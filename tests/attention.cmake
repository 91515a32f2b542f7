# Attention (issue 26): the online-softmax merge primitive, the GQA8 paged FP8-KV and GQA4 extend contracts, their
# fragment plans, oracles, phase dispatch, negative compile tests and GPU tests. Included by
# tests/CMakeLists.txt.

netra_add_host_test(test_online_softmax dsl/test_online_softmax.cpp)
netra_add_host_test(test_attention_plans kernels/test_attention_plans.cpp)
target_compile_options(test_attention_plans PRIVATE -O2)
netra_add_host_test(test_attention_gqa8_block_split kernels/test_attention_gqa8_block_split.cpp)
target_compile_options(test_attention_gqa8_block_split PRIVATE -O2)
netra_add_host_test(test_attention_contracts contracts/test_attention_contracts.cpp)
netra_add_host_test(test_attention_oracles kernels/test_attention_oracles.cpp)
target_compile_options(test_attention_oracles PRIVATE -O2)
netra_add_host_test(test_attention_extend_oracles kernels/test_attention_extend_oracles.cpp)
target_compile_options(test_attention_extend_oracles PRIVATE -O2)
netra_add_host_test(test_attention_extend_plan kernels/test_attention_extend_plan.cpp)
netra_add_gpu_test(test_attention_gqa8_gpu gpu/test_attention_gqa8_gpu.cpp)
if(TARGET test_attention_gqa8_gpu)
  target_compile_options(test_attention_gqa8_gpu PRIVATE -O2)
endif()

netra_add_gpu_test(test_attention_extend_gpu gpu/test_attention_extend_gpu.cpp)
if(TARGET test_attention_extend_gpu)
  target_compile_options(test_attention_extend_gpu PRIVATE -O2)
endif()

# The C ABI (netra/c/attention.h over libnetra) and its header as C.
add_test(NAME attention_c_header_is_c
         COMMAND ${CMAKE_CXX_COMPILER} -x c -std=c99 -pedantic -Wall -Wextra -Werror -fsyntax-only -I${PROJECT_SOURCE_DIR}/include
                 ${CMAKE_CURRENT_SOURCE_DIR}/contracts/test_attention_c_header.c)
set_tests_properties(attention_c_header_is_c PROPERTIES LABELS runtime)
if(TARGET netra_runtime)
  netra_add_gpu_test(test_attention_c_abi_gpu gpu/test_attention_c_abi_gpu.cpp)
  if(TARGET test_attention_c_abi_gpu)
    target_link_libraries(test_attention_c_abi_gpu PRIVATE netra::runtime)
    set_tests_properties(test_attention_c_abi_gpu PROPERTIES LABELS "gpu;runtime")
  endif()
  netra_add_gpu_test(test_attention_extend_c_abi_gpu gpu/test_attention_extend_c_abi_gpu.cpp)
  if(TARGET test_attention_extend_c_abi_gpu)
    target_compile_options(test_attention_extend_c_abi_gpu PRIVATE -O2)
    target_link_libraries(test_attention_extend_c_abi_gpu PRIVATE netra::runtime)
    set_tests_properties(test_attention_extend_c_abi_gpu PROPERTIES LABELS "gpu;runtime")
  endif()
endif()

# Negative compile tests: each unsupported contract field fails with its message.
netra_add_compile_fail_test(negative_attention_page_size negative/attention_page_size.cpp
  "netra::contracts::attention_gqa8: field PageSize must be 1 or 16")
netra_add_compile_fail_test(negative_attention_phase_extend negative/attention_phase_extend.cpp
  "netra::contracts::attention_gqa8: field Phase must be decode \\(0\\) or verify \\(2\\)")
netra_add_compile_fail_test(negative_attention_decode_tq negative/attention_decode_tq.cpp
  "netra::contracts::attention_gqa8: field Tq must be 1 in decode")
netra_add_compile_fail_test(negative_attention_block_warps negative/attention_block_warps.cpp
  "netra::contracts::attention_gqa8: field BlockWarps must be 1, 2, 4 or 8")
netra_add_compile_fail_test(negative_attention_block_split negative/attention_block_split.cpp
  "netra::contracts::attention_gqa8: field BlockSplit must be 1, or 2, 4 or 8 with Stages 0 \\(decode\\), or 2 with an LDS ring")
netra_add_compile_fail_test(negative_attention_warpgroup_target negative/attention_warpgroup_target.cpp
  "netra::contracts::attention_gqa8: field WarpgroupMma must be 0, or 1 on a target with warpgroup matrix instructions")
netra_add_compile_fail_test(negative_attention_target negative/attention_target.cpp
  "netra::contracts::attention_gqa8: field Target is not supported")
netra_add_compile_fail_test(negative_attention_lds negative/attention_lds.cpp
  "netra::contracts::attention_gqa8: the staging ring exceeds the target's LDS")
netra_add_compile_fail_test(negative_attention_extend_page_size negative/attention_extend_page_size.cpp
  "netra::contracts::attention_gqa4_extend: field PageSize must be 1 or 16")
netra_add_compile_fail_test(negative_attention_extend_split_capacity negative/attention_extend_split_capacity.cpp
  "netra::contracts::attention_gqa4_extend: field SplitCapacity must be in \\[2 MaxBatch, 1024\\]")
netra_add_host_test(test_attention_gqa8_pair_plan kernels/test_attention_gqa8_pair_plan.cpp)
target_compile_options(test_attention_gqa8_pair_plan PRIVATE -O2)
netra_add_host_test(test_attention_gqa8_warpgroup_layout kernels/test_attention_gqa8_warpgroup_layout.cpp)
netra_add_host_test(test_attention_gqa8_stage_two kernels/test_attention_gqa8_stage_two.cpp)
