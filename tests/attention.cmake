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
