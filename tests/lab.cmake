# The lab (lab/): every ledger row's patch applies at its recorded base commit and its data file
# exists. Needs the repository's history; a shallow clone reports the test as skipped (77).
find_package(Python3 COMPONENTS Interpreter QUIET)
find_program(NETRA_GIT git)
if(Python3_FOUND AND NETRA_GIT)
  add_test(NAME lab_ledger COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/lab/check_ledger.py --root ${PROJECT_SOURCE_DIR})
  set_tests_properties(lab_ledger PROPERTIES SKIP_RETURN_CODE 77 LABELS lab)
else()
  message(WARNING "netra: python3 or git not found: the lab ledger test is not registered")
endif()
