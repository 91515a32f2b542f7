# Gated delta net (issue 27): conv update, precompute, K0 / M16 recurrent core, accepted-prefix
# replay. Host tests (oracle models, math, contracts, the code-object audit), negative compile
# tests, GPU tests (kernels vs oracles, the verify/commit protocol test). Included by
# tests/CMakeLists.txt.
#
# On a machine with an H200: ctest --test-dir <build> -R gdn --output-on-failure

netra_add_host_test(test_gdn_host
  kernels/test_gdn_model.cpp
  kernels/test_gdn_math.cpp)
target_compile_options(test_gdn_host PRIVATE -O2)

netra_add_gpu_test(test_gdn_gpu gpu/test_gdn_kernels_gpu.cpp gpu/test_gdn_protocol_gpu.cpp)
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
