# Normalization (issue 28): RMSNorm, residual add + RMSNorm, gated RMSNorm; BF16 or block-E4M3
# output. Host tests, negative compile tests, GPU tests. Included by tests/CMakeLists.txt.
#
# On a machine with an H200 (sm_90a), after building:
#   ctest --test-dir <build> -R norm --output-on-failure

netra_add_host_test(test_norm_host
  contracts/test_norm_contract.cpp
  kernels/test_norm_model.cpp
  kernels/test_norm_oracle.cpp
  kernels/test_norm_rsqrt.cpp
  kernels/test_norm_silu.cpp
  kernels/test_norm_group_reciprocal.cpp
  kernels/test_norm_group_quarters.cpp)
target_compile_options(test_norm_host PRIVATE -O2)

# Negative compile tests: each unsupported field fails with its message.
netra_add_compile_fail_test(negative_norm_target negative/norm_target.cpp
  "netra::contracts::norm: field Target is not supported; supported: netra::gfx950, netra::sm90a")
netra_add_compile_fail_test(negative_norm_kind negative/norm_kind.cpp
  "netra::contracts::norm: field Kind must be 0 \\(rms\\), 1 \\(add_rms\\) or 2 \\(gated\\)")
netra_add_compile_fail_test(negative_norm_waves_per_row negative/norm_waves_per_row.cpp
  "netra::contracts::norm: field WavesPerRow must be 1, or 2 where a row has more slices than a wave has lanes")
netra_add_compile_fail_test(negative_norm_gated_weight negative/norm_gated_weight.cpp
  "netra::contracts::norm: field Weight: the gated norm has a plain weight")
netra_add_compile_fail_test(negative_norm_whole_waves negative/norm_whole_waves.cpp
  "netra::contracts::norm: field RowsPerWorkgroup must make whole waves")
netra_add_compile_fail_test(negative_norm_max_tokens negative/norm_max_tokens.cpp
  "netra::contracts::norm: field MaxTokens must be in \\[1, 8192\\]")
netra_add_compile_fail_test(negative_norm_split negative/norm_split.cpp
  "netra::contracts::norm: field Split must be 1, or 2 or 4 for rms / add_rms with one row per workgroup")
netra_add_compile_fail_test(negative_norm_split_clusters negative/norm_split_clusters.cpp
  "netra::contracts::norm: field Split > 1 for add_rms needs workgroup clusters")
netra_add_compile_fail_test(negative_norm_slices_per_thread negative/norm_slices_per_thread.cpp
  "netra::contracts::norm: field SlicesPerThread must be 0 \\(as the wave gives\\), or 2 or 4 for the gated norm")

netra_add_compile_fail_test(negative_norm_chain negative/norm_chain.cpp
  "netra::contracts::norm: field Chain must be 0 or, for the gated norm, a sum of the bits 1, 8")
netra_add_compile_fail_test(negative_norm_quarter_chain negative/norm_quarter_chain.cpp
  "for rms / add_rms with an FP8 output, Split 1 and four chunks per thread: 32, plus 2 and 16")

netra_add_gpu_test(test_norm_gpu gpu/test_norm_gpu.cpp)

# GPU benchmark driver (run by bench/norm.py, not by ctest).
if(CUDAToolkit_FOUND)
  add_executable(netra-bench-norm ${PROJECT_SOURCE_DIR}/bench/norm_bench.cpp)
  target_link_libraries(netra-bench-norm PRIVATE netra::netra ${CMAKE_DL_LIBS})
  target_include_directories(netra-bench-norm PRIVATE ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_SOURCE_DIR} ${CUDAToolkit_INCLUDE_DIRS})
  target_compile_definitions(netra-bench-norm PRIVATE NETRA_CODE_OBJECT_DIR="${NETRA_CODE_OBJECT_DIR}")
  target_compile_options(netra-bench-norm PRIVATE ${NETRA_TEST_WARNINGS})
  if(TARGET netra_code_objects)
    add_dependencies(netra-bench-norm netra_code_objects)
  endif()
endif()

# The C ABI (libnetra): the header as C99, and on the GPU the calls, the refusals (nothing
# written) and graph capture. tests/python/test_norm.py runs with the Python package's tests.
if(TARGET netra_runtime)
  add_test(NAME norm_c_header_is_c
           COMMAND ${CMAKE_CXX_COMPILER} -x c -std=c99 -pedantic -Wall -Wextra -Werror -fsyntax-only -I${PROJECT_SOURCE_DIR}/include
                   -include netra/c/norm.h /dev/null)
  set_tests_properties(norm_c_header_is_c PROPERTIES LABELS runtime)
  netra_add_gpu_test(test_norm_c_abi_gpu gpu/test_norm_c_abi_gpu.cpp)
  if(TARGET test_norm_c_abi_gpu)
    target_link_libraries(test_norm_c_abi_gpu PRIVATE netra::runtime)
    set_tests_properties(test_norm_c_abi_gpu PROPERTIES LABELS "gpu;runtime")
  endif()
endif()
