# tests/tools/check_isa.cmake — compiles one HIP source for one AMD target and checks that its
# disassembly contains every EXPECT pattern (CMake regexes, ';'-separated) and none of FORBID.
#   cmake -DCLANG=... -DOBJDUMP=... -DARCH=gfx942 -DSOURCE=... -DINCLUDE=... -DOUT=... \
#         -DEXPECT="v_mfma;v_cvt_pk_fp8_f32" [-DFORBID="ds_bpermute"] -P check_isa.cmake
execute_process(COMMAND ${CLANG} -x hip --offload-arch=${ARCH} --cuda-device-only -nogpulib -nogpuinc -O3 -std=c++20 -Wall -Werror
                        --no-gpu-bundle-output -I${INCLUDE} ${SOURCE} -o ${OUT}
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "check_isa: ${SOURCE} does not compile for ${ARCH}:\n${err}")
endif()
execute_process(COMMAND ${OBJDUMP} -d --mcpu=${ARCH} ${OUT} OUTPUT_VARIABLE dis RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "check_isa: llvm-objdump failed on ${OUT}")
endif()
foreach(p IN LISTS EXPECT)
  if(NOT dis MATCHES "${p}")
    message(FATAL_ERROR "check_isa: ${ARCH}: '${p}' not found in the disassembly of ${SOURCE}")
  endif()
endforeach()
foreach(p IN LISTS FORBID)
  if(dis MATCHES "${p}")
    message(FATAL_ERROR "check_isa: ${ARCH}: '${p}' found in the disassembly of ${SOURCE}")
  endif()
endforeach()
message(STATUS "check_isa: ${ARCH}: ${SOURCE}: every expected instruction present")
