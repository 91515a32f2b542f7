# bench/summarize.py turns the committed results (bench/results) into docs/results.md and one plot per
# family file, without a GPU; skipped (77) where the interpreter has no matplotlib. Debian's own
# python3 (where install-deps.sh puts python3-matplotlib) is preferred over another python3 on PATH.
find_package(Python3 COMPONENTS Interpreter QUIET)
find_program(NETRA_DEBIAN_PYTHON3 python3 PATHS /usr/bin NO_DEFAULT_PATH)
set(_netra_summary_python ${NETRA_DEBIAN_PYTHON3})
if(NOT _netra_summary_python)
  set(_netra_summary_python ${Python3_EXECUTABLE})
endif()
if(_netra_summary_python)
  add_test(NAME bench_summarize COMMAND ${_netra_summary_python} ${CMAKE_CURRENT_SOURCE_DIR}/tools/check_summarize.py --root ${PROJECT_SOURCE_DIR})
  set_tests_properties(bench_summarize PROPERTIES SKIP_RETURN_CODE 77 LABELS bench)
else()
  message(WARNING "netra: python3 not found: the results summary test is not registered")
endif()
