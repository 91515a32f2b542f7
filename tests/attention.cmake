# Attention (issue 26): the online-softmax merge primitive, the GQA8 paged FP8-KV contract, its
# fragment plans, oracles, phase dispatch, negative compile tests and GPU tests. Included by
# tests/CMakeLists.txt.

netra_add_host_test(test_online_softmax dsl/test_online_softmax.cpp)
netra_add_host_test(test_attention_plans kernels/test_attention_plans.cpp)
target_compile_options(test_attention_plans PRIVATE -O2)
