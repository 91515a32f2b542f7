# The integrated step's pure logic (python/netra/step/plan.py: buckets, padding, bytes floor,
# coverage table), tested under plain python3 without torch or a GPU. The GPU parts
# (tests/python/test_step.py, test_torch_ops.py) run with the Python package's pytest suite.
find_package(Python3 COMPONENTS Interpreter QUIET)
if(Python3_FOUND)
  add_test(NAME step_plan COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/python/test_step_plan.py)
  set_tests_properties(step_plan PROPERTIES LABELS "step;python-host")
else()
  message(WARNING "netra: python3 not found: the step plan test is not registered")
endif()

# The decode step's instances (issue 30: every decode bucket B 1..128 on netra): the GDN one-token
# decode (contracts/gdn/decode.hpp) and the GQA8 decode widened to batch 128 — admission,
# dispatch, grids and the decode protocol on the oracle (host); the GDN decode kernels against the
# oracle for every B 1..128 and in captured graphs (GPU; the widened attention's GPU case is in
# tests/gpu/test_attention_gqa8_gpu.cpp).
netra_add_host_test(test_gdn_decode kernels/test_gdn_decode.cpp)
target_compile_options(test_gdn_decode PRIVATE -O2)
set_tests_properties(test_gdn_decode PROPERTIES LABELS "step;gdn")
netra_add_gpu_test(test_gdn_decode_gpu gpu/test_gdn_decode_gpu.cpp)
if(TARGET test_gdn_decode_gpu)
  target_compile_options(test_gdn_decode_gpu PRIVATE -O2)
  find_package(Threads REQUIRED)
  target_link_libraries(test_gdn_decode_gpu PRIVATE Threads::Threads)
endif()
