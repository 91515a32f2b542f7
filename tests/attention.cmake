# Attention (issue 26): the online-softmax merge primitive, the GQA8 paged FP8-KV contract, its
# fragment plans, oracles, phase dispatch, negative compile tests and GPU tests. Included by
# tests/CMakeLists.txt.

netra_add_host_test(test_online_softmax dsl/test_online_softmax.cpp)
netra_add_host_test(test_attention_plans kernels/test_attention_plans.cpp)
target_compile_options(test_attention_plans PRIVATE -O2)
netra_add_host_test(test_attention_contracts contracts/test_attention_contracts.cpp)
netra_add_host_test(test_attention_oracles kernels/test_attention_oracles.cpp)
target_compile_options(test_attention_oracles PRIVATE -O2)
netra_add_gpu_test(test_attention_gqa8_gpu gpu/test_attention_gqa8_gpu.cpp)
if(TARGET test_attention_gqa8_gpu)
  target_compile_options(test_attention_gqa8_gpu PRIVATE -O2)
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
endif()
