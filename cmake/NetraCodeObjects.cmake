# NetraCodeObjects.cmake — build-time code objects for netra contract instances.
#
#   netra_add_code_object(NAME <instance> TARGET <gfx950|gfx942|gfx1151|gfx90a|sm90a> FAMILY <family>
#                         CONTRACT "<C++ contract type>" [OUTPUT_DIRECTORY <dir>]
#                         [INCLUDE_DIRECTORIES <dir>...])
#
# Writes one translation unit per instance (#include <netra/instantiate/<family>.hpp> +
# NETRA_INSTANTIATE(<contract>)) and compiles it:
#   gfx950/gfx942/gfx1151/gfx90a: clang-22 -x hip --cuda-device-only -nogpulib -nogpuinc -> <dir>/<NAME>.hsaco
#   sm90a:         nvcc -cubin -gencode=arch=compute_90a,code=sm_90a   -> <dir>/<NAME>.cubin,
#                  plus <NAME>.ptx and <NAME>.ptxas.txt (ptxas -v: registers, stack, spills)
# Appends the outputs to the global property NETRA_CODE_OBJECTS. A target whose compiler was
# not found is skipped with a visible warning and recorded in NETRA_SKIPPED_TARGETS.
include_guard(GLOBAL)

set(_NETRA_CMAKE_DIR "${CMAKE_CURRENT_LIST_DIR}")

find_program(NETRA_CLANG NAMES clang-22 DOC "clang 22 (gfx950 code objects)")
find_program(NETRA_NVCC NAMES nvcc HINTS /usr/local/cuda/bin ENV CUDA_PATH PATH_SUFFIXES bin DOC "nvcc (sm_90a cubins)")
find_program(NETRA_LLVM_READELF NAMES llvm-readelf-22 DOC "llvm-readelf 22 (gfx950 audit)")
find_program(NETRA_LLVM_OBJDUMP NAMES llvm-objdump-22 DOC "llvm-objdump 22 (gfx950 audit)")

set(NETRA_SKIPPED_TARGETS "" CACHE INTERNAL "targets whose compiler is missing")
if(NOT NETRA_CLANG)
  message(WARNING "netra: clang-22 not found: gfx950 code objects are SKIPPED (apt-get install clang-22 lld-22 llvm-22)")
  list(APPEND NETRA_SKIPPED_TARGETS gfx950 gfx942 gfx1151 gfx90a)
endif()
if(NOT NETRA_NVCC)
  message(WARNING "netra: nvcc not found: sm90a cubins are SKIPPED (CUDA 13 expected in /usr/local/cuda)")
  list(APPEND NETRA_SKIPPED_TARGETS sm90a)
endif()
set(NETRA_SKIPPED_TARGETS "${NETRA_SKIPPED_TARGETS}" CACHE INTERNAL "targets whose compiler is missing")

function(netra_add_code_object)
  cmake_parse_arguments(A "" "NAME;TARGET;FAMILY;CONTRACT;OUTPUT_DIRECTORY" "INCLUDE_DIRECTORIES" ${ARGN})
  foreach(req NAME TARGET FAMILY CONTRACT)
    if(NOT A_${req})
      message(FATAL_ERROR "netra_add_code_object: ${req} is required")
    endif()
  endforeach()
  if(NOT A_OUTPUT_DIRECTORY)
    set(A_OUTPUT_DIRECTORY "${CMAKE_CURRENT_BINARY_DIR}/code_objects")
  endif()
  if(A_TARGET IN_LIST NETRA_SKIPPED_TARGETS)
    message(STATUS "netra: ${A_NAME} SKIPPED (no compiler for ${A_TARGET})")
    return()
  endif()

  get_target_property(_netra_inc netra::netra INTERFACE_INCLUDE_DIRECTORIES)
  set(_incs)
  foreach(d IN LISTS _netra_inc A_INCLUDE_DIRECTORIES)
    string(REGEX REPLACE "^\\$<BUILD_INTERFACE:(.*)>$" "\\1" d "${d}")
    if(d MATCHES "^\\$<")
      continue()
    endif()
    list(APPEND _incs "-I${d}")
  endforeach()

  set(gen_dir "${CMAKE_CURRENT_BINARY_DIR}/netra_generated")
  file(MAKE_DIRECTORY "${gen_dir}" "${A_OUTPUT_DIRECTORY}")
  set(source_text "#include <netra/instantiate/${A_FAMILY}.hpp>\nNETRA_INSTANTIATE(${A_CONTRACT})\n")

  if(A_TARGET MATCHES "^(gfx950|gfx942|gfx1151|gfx90a)$")
    set(src "${gen_dir}/${A_NAME}.hip")
    set(obj "${A_OUTPUT_DIRECTORY}/${A_NAME}.hsaco")
    file(CONFIGURE OUTPUT "${src}" CONTENT "${source_text}")
    add_custom_command(OUTPUT "${obj}"
      COMMAND "${NETRA_CLANG}" -x hip --offload-arch=${A_TARGET} --cuda-device-only -nogpulib -nogpuinc
              -O3 -std=c++20 -Wall -Werror --no-gpu-bundle-output -fuse-cuid=none ${_incs}
              -Xclang -dependency-file -Xclang "${obj}.d" -Xclang -MT -Xclang "${obj}" "${src}" -o "${obj}"
      DEPENDS "${src}" DEPFILE "${obj}.d"
      COMMENT "netra: ${A_NAME} -> ${A_TARGET} code object" VERBATIM)
    set(outputs "${obj}")
  elseif(A_TARGET STREQUAL "sm90a")
    set(src "${gen_dir}/${A_NAME}.cu")
    set(obj "${A_OUTPUT_DIRECTORY}/${A_NAME}.cubin")
    set(ptx "${A_OUTPUT_DIRECTORY}/${A_NAME}.ptx")
    set(log "${A_OUTPUT_DIRECTORY}/${A_NAME}.ptxas.txt")
    file(CONFIGURE OUTPUT "${src}" CONTENT "${source_text}")
    add_custom_command(OUTPUT "${obj}" "${ptx}" "${log}"
      COMMAND "${CMAKE_COMMAND}" -DNETRA_LOG=${log} -P "${_NETRA_CMAKE_DIR}/netra_capture.cmake"
              "${NETRA_NVCC}" -std=c++20 -O3 -cubin -gencode=arch=compute_90a,code=sm_90a -Xptxas -v
              -Werror all-warnings ${_incs} -MD -MF "${obj}.d" "${src}" -o "${obj}"
      COMMAND "${NETRA_NVCC}" -std=c++20 -O3 -ptx -arch=compute_90a ${_incs} "${src}" -o "${ptx}"
      DEPENDS "${src}" DEPFILE "${obj}.d"
      COMMENT "netra: ${A_NAME} -> sm_90a cubin" VERBATIM)
    set(outputs "${obj}" "${ptx}" "${log}")
  else()
    message(FATAL_ERROR "netra_add_code_object: TARGET '${A_TARGET}' is not one of gfx950, gfx942, gfx1151, gfx90a, sm90a")
  endif()
  set_property(GLOBAL APPEND PROPERTY NETRA_CODE_OBJECTS ${outputs})
endfunction()
