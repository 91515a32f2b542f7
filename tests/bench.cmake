# bench/summarize.py turns the committed results (bench/results) into docs/results.md and one plot per
# family file, without a GPU; skipped (77) where the interpreter has no matplotlib.
find_package(Python3 COMPONENTS Interpreter QUIET)
if(Python3_FOUND)
  add_test(NAME bench_summarize COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/tools/check_summarize.py --root ${PROJECT_SOURCE_DIR})
  set_tests_properties(bench_summarize PROPERTIES SKIP_RETURN_CODE 77 LABELS bench)
else()
  message(WARNING "netra: python3 not found: the results summary test is not registered")
endif()
