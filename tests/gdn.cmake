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
