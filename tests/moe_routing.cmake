# MoE routing kernels (issue 4 §1-3): act_quant, router, shared-expert gate with route append.
# Host tests, negative compile tests and GPU tests. Included by tests/CMakeLists.txt.
#
# On a machine with an H200 (sm_90a), after building:
#   ctest --test-dir <build> -R "moe_routing|dsl_math" --output-on-failure
# runs the host tests and test_moe_routing_gpu (bitwise act_quant / router exact / shared gate,
# bounded router matrix tactic).

netra_add_host_test(test_dsl_math dsl/test_math.cpp)
target_compile_options(test_dsl_math PRIVATE -O2)
netra_add_host_test(test_moe_routing_host
  contracts/test_moe_routing_contracts.cpp
  kernels/test_moe_act_quant_model.cpp
  kernels/test_moe_router_logits_model.cpp
  kernels/test_moe_router_route_model.cpp)
target_compile_options(test_moe_routing_host PRIVATE -O2)

# Negative compile tests: each unsupported field fails with its message.
netra_add_compile_fail_test(negative_moe_act_quant_target negative/moe_routing_act_quant_target.cpp
  "netra::contracts::moe_act_quant: field Target is not supported; supported: netra::gfx950, netra::sm90a")
netra_add_compile_fail_test(negative_moe_act_quant_max_rows negative/moe_routing_act_quant_max_rows.cpp
  "netra::contracts::moe_act_quant: field MaxRows must be in \\[1, 4608\\]")
netra_add_compile_fail_test(negative_moe_act_quant_vectors negative/moe_routing_act_quant_vectors.cpp
  "netra::contracts::moe_act_quant: field VectorsPerLane must be 1, 2 or 4")
netra_add_compile_fail_test(negative_moe_act_quant_whole_waves negative/moe_routing_act_quant_whole_waves.cpp
  "netra::contracts::moe_act_quant: field RowsPerWorkgroup must make whole waves")
netra_add_compile_fail_test(negative_moe_act_quant_wave_size negative/moe_routing_act_quant_wave_size.cpp
  "netra::contracts::moe_act_quant: field WaveSize must equal the target's wave size")
netra_add_compile_fail_test(negative_moe_router_tactic negative/moe_routing_router_tactic.cpp
  "netra::contracts::moe_router: field Tactic must be 0 \\(exact_fp32\\) or 1 \\(matrix_bf16\\)")
netra_add_compile_fail_test(negative_moe_router_max_tokens negative/moe_routing_router_max_tokens.cpp
  "netra::contracts::moe_router: field MaxTokens must be in \\[1, 768\\]")
netra_add_compile_fail_test(negative_moe_router_target negative/moe_routing_router_target.cpp
  "netra::contracts::moe_router: field Target is not supported; supported: netra::gfx950, netra::sm90a")
netra_add_compile_fail_test(negative_moe_router_cluster_target negative/moe_routing_router_cluster_target.cpp
  "netra::contracts::moe_router: field Cluster must be 0 on a target without workgroup clusters \\(gfx950\\)")
netra_add_compile_fail_test(negative_moe_router_cluster_tactic negative/moe_routing_router_cluster_tactic.cpp
  "netra::contracts::moe_router: field Cluster: only Tactic 0 \\(exact_fp32\\) has a cluster mapping")
netra_add_compile_fail_test(negative_moe_shared_gate_whole_waves negative/moe_routing_shared_gate_whole_waves.cpp
  "netra::contracts::moe_shared_gate: field TokensPerWorkgroup must make whole waves")
netra_add_compile_fail_test(negative_moe_shared_gate_max_tokens negative/moe_routing_shared_gate_max_tokens.cpp
  "netra::contracts::moe_shared_gate: field MaxTokens must be in \\[1, 131070\\]")

netra_add_gpu_test(test_moe_routing_gpu
  gpu/test_moe_act_quant_gpu.cpp
  gpu/test_moe_router_gpu.cpp
  gpu/test_moe_shared_gate_gpu.cpp)

# GPU benchmark driver for the routing kernels (run by bench/moe_routing.py, not by ctest).
if(CUDAToolkit_FOUND)
  add_executable(netra-bench-moe-routing ${PROJECT_SOURCE_DIR}/bench/moe_routing_bench.cpp)
  target_link_libraries(netra-bench-moe-routing PRIVATE netra::netra ${CMAKE_DL_LIBS})
  target_include_directories(netra-bench-moe-routing PRIVATE ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_SOURCE_DIR} ${CUDAToolkit_INCLUDE_DIRS})
  target_compile_definitions(netra-bench-moe-routing PRIVATE NETRA_CODE_OBJECT_DIR="${NETRA_CODE_OBJECT_DIR}")
  target_compile_options(netra-bench-moe-routing PRIVATE ${NETRA_TEST_WARNINGS})
  if(TARGET netra_code_objects)
    add_dependencies(netra-bench-moe-routing netra_code_objects)
  endif()
endif()

# The C ABI (libnetra): host checks, the header as C99, and on the GPU dispatch + graph capture.
if(TARGET netra_runtime)
  netra_add_runtime_test(test_moe_routing_c_abi runtime/test_moe_routing_c_abi.cpp)
  add_test(NAME moe_routing_c_header_is_c
           COMMAND ${CMAKE_CXX_COMPILER} -x c -std=c99 -pedantic -Wall -Wextra -Werror -fsyntax-only -I${PROJECT_SOURCE_DIR}/include
                   ${CMAKE_CURRENT_SOURCE_DIR}/runtime/moe_routing_c_header.c)
  set_tests_properties(moe_routing_c_header_is_c PROPERTIES LABELS runtime)
  netra_add_gpu_test(test_moe_routing_c_abi_gpu gpu/test_moe_routing_c_abi_gpu.cpp)
  if(TARGET test_moe_routing_c_abi_gpu)
    target_link_libraries(test_moe_routing_c_abi_gpu PRIVATE netra::runtime)
    set_tests_properties(test_moe_routing_c_abi_gpu PROPERTIES LABELS "gpu;runtime")
  endif()
endif()
