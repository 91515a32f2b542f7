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
