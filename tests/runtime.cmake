# tests/runtime.cmake — tests of the host runtime, the JIT and its cache, dispatch, the C ABI and
# the Python package (included by tests/CMakeLists.txt). Host tests run everywhere (no GPU
# needed: NVRTC, hipRTC and clang-22 compile without one); GPU tests carry the label gpu.
if(NOT TARGET netra_runtime)
  return()
endif()

# A host test of the runtime: links libnetra, sees cuda.h / nvrtc.h, the code objects, the
# compilers the build found and the include tree the JIT reads.
function(netra_add_runtime_test name)
  netra_add_host_test(${name} ${ARGN})
  target_link_libraries(${name} PRIVATE netra::runtime ${CMAKE_DL_LIBS})
  target_include_directories(${name} PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
  target_compile_definitions(${name} PRIVATE NETRA_CODE_OBJECT_DIR="${NETRA_CODE_OBJECT_DIR}"
                                             NETRA_TEST_INCLUDE_DIR="${PROJECT_SOURCE_DIR}/include")
  if(NETRA_CLANG)
    target_compile_definitions(${name} PRIVATE NETRA_DEFAULT_CLANG="${NETRA_CLANG}")
  endif()
  set_tests_properties(${name} PROPERTIES LABELS runtime)
endfunction()

netra_add_runtime_test(test_runtime_backend runtime/test_backend.cpp)
netra_add_runtime_test(test_runtime_dispatch runtime/test_dispatch.cpp)
netra_add_runtime_test(test_runtime_jit runtime/test_jit.cpp)
netra_add_runtime_test(test_rtc_headers runtime/test_rtc_headers.cpp)

# Several processes sharing one JIT cache.
add_executable(jit_cache_worker runtime/jit_cache_worker.cpp)
target_link_libraries(jit_cache_worker PRIVATE netra::netra Boost::headers ${CMAKE_DL_LIBS})
target_include_directories(jit_cache_worker PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
target_compile_definitions(jit_cache_worker PRIVATE NETRA_TEST_INCLUDE_DIR="${PROJECT_SOURCE_DIR}/include")
if(NETRA_CLANG)
  target_compile_definitions(jit_cache_worker PRIVATE NETRA_DEFAULT_CLANG="${NETRA_CLANG}")
endif()
netra_add_runtime_test(test_jit_cache_concurrency runtime/test_jit_cache_concurrency.cpp)
target_compile_definitions(test_jit_cache_concurrency PRIVATE NETRA_JIT_CACHE_WORKER="$<TARGET_FILE:jit_cache_worker>")
add_dependencies(test_jit_cache_concurrency jit_cache_worker)

netra_add_runtime_test(test_embedded_objects runtime/test_embedded_objects.cpp)
netra_add_runtime_test(test_c_abi runtime/test_c_abi.cpp)
netra_add_runtime_test(test_tensor_boundary runtime/test_tensor_boundary.cpp)
netra_add_runtime_test(test_prebuild runtime/test_prebuild.cpp)
target_compile_definitions(test_prebuild PRIVATE NETRA_PREBUILD="$<TARGET_FILE:netra-prebuild>")
add_dependencies(test_prebuild netra-prebuild)

# The C headers are C: they compile as C99 with every warning.
add_test(NAME c_headers_are_c
         COMMAND ${CMAKE_CXX_COMPILER} -x c -std=c99 -pedantic -Wall -Wextra -Werror -fsyntax-only -I${PROJECT_SOURCE_DIR}/include
                 ${CMAKE_CURRENT_SOURCE_DIR}/runtime/c_headers.c)
set_tests_properties(c_headers_are_c PROPERTIES LABELS runtime)

# On the GPU: the C ABI and dispatch against the oracle, bad input (every family), JIT through
# NVRTC, and graph capture under global mode with 1000 replays.
foreach(name test_runtime_gpu test_graph_capture_gpu test_c_abi_bad_input_gpu)
  netra_add_gpu_test(${name} gpu/${name}.cpp)
  if(TARGET ${name})
    target_link_libraries(${name} PRIVATE netra::runtime)
    target_compile_definitions(${name} PRIVATE NETRA_TEST_INCLUDE_DIR="${PROJECT_SOURCE_DIR}/include")
    set_tests_properties(${name} PROPERTIES LABELS "gpu;runtime")
  endif()
endforeach()

# The Python package on the GPU (pytest; skipped without pytest, torch or a CUDA device). Point
# -DPython3_EXECUTABLE at the interpreter that has torch.
find_package(Python3 COMPONENTS Interpreter QUIET)
if(Python3_FOUND)
  add_test(NAME python_argmax
           COMMAND ${CMAKE_COMMAND} -E env NETRA_LIBRARY=$<TARGET_FILE:netra_runtime>
                   ${Python3_EXECUTABLE} -m pytest -q -rs ${CMAKE_CURRENT_SOURCE_DIR}/python)
  set_tests_properties(python_argmax PROPERTIES LABELS "gpu;python"
                       SKIP_REGULAR_EXPRESSION "netra-python-tests skipped|No module named pytest")
endif()
