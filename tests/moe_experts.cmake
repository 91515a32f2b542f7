# MoE expert projections (issue 4 §4): DSL matrix fragments, gate_up / down contracts, kernels,
# host models, negative compile tests and GPU tests. Included by tests/CMakeLists.txt.

netra_add_host_test(test_moe_fragments dsl/test_matrix_fragments.cpp)
# The fragment layer (dsl/fragment/): every shape's piece maps against the instruction models.
netra_add_host_test(test_dsl_fragments dsl/test_fragment_pieces.cpp)
# The umbrella header netra/dsl.hpp compiles under the host compiler, nvcc (sm_90a) and clang (gfx950).
add_test(NAME dsl_umbrella_host COMMAND ${CMAKE_CXX_COMPILER} -std=c++20 -fsyntax-only -I${PROJECT_SOURCE_DIR}/include
                                        ${CMAKE_CURRENT_SOURCE_DIR}/dsl/dsl_umbrella.cpp)
if(NETRA_NVCC)
  add_test(NAME dsl_umbrella_nvcc COMMAND ${NETRA_NVCC} -std=c++20 -x cu -c -gencode=arch=compute_90a,code=sm_90a
                                          -I${PROJECT_SOURCE_DIR}/include ${CMAKE_CURRENT_SOURCE_DIR}/dsl/dsl_umbrella.cpp -o /dev/null)
endif()
if(NETRA_CLANG)
  add_test(NAME dsl_umbrella_gfx950 COMMAND ${NETRA_CLANG} -x hip --offload-arch=gfx950 --cuda-device-only -nogpulib -nogpuinc -std=c++20
                                            -fsyntax-only -I${PROJECT_SOURCE_DIR}/include ${CMAKE_CURRENT_SOURCE_DIR}/dsl/dsl_umbrella.cpp)
endif()
netra_add_host_test(test_moe_experts_model kernels/test_moe_experts_gate_up_model.cpp kernels/test_moe_experts_down_model.cpp
  kernels/test_moe_experts_units_model.cpp)
target_compile_options(test_moe_experts_model PRIVATE -O2)

netra_add_gpu_test(test_moe_experts_gpu gpu/test_moe_experts_gpu.cpp)
if(TARGET test_moe_experts_gpu AND TARGET netra_runtime)
  target_link_libraries(test_moe_experts_gpu PRIVATE netra::runtime)
endif()

# The DSL's sm90a matrix fragments on the hardware (mma.sync through the DSL; wgmma with a
# shared-memory descriptor; the bulk copy into shared memory): test kernels compiled to their own cubin.
if(NETRA_NVCC AND TARGET test_moe_experts_gpu)
  set(_netra_fragment_cubin ${CMAKE_CURRENT_BINARY_DIR}/moe_fragments_kernels.cubin)
  add_custom_command(OUTPUT ${_netra_fragment_cubin}
    COMMAND ${NETRA_NVCC} -std=c++20 -O3 -cubin -gencode=arch=compute_90a,code=sm_90a -I${PROJECT_SOURCE_DIR}/include
            ${CMAKE_CURRENT_SOURCE_DIR}/gpu/moe_fragments_kernels.cu -o ${_netra_fragment_cubin}
    DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/gpu/moe_fragments_kernels.cu ${PROJECT_SOURCE_DIR}/include/netra/dsl/arch/sm90a/mma.hpp
            ${PROJECT_SOURCE_DIR}/include/netra/dsl/bulk_copy.hpp ${PROJECT_SOURCE_DIR}/include/netra/dsl/arch/sm90a/bulk_copy.hpp
            ${PROJECT_SOURCE_DIR}/include/netra/dsl/cluster.hpp ${PROJECT_SOURCE_DIR}/include/netra/dsl/arch/sm90a/cluster.hpp
            ${PROJECT_SOURCE_DIR}/include/netra/dsl/matrix_fragment.hpp
    COMMENT "netra: sm90a fragment test kernels" VERBATIM)
  add_custom_target(netra_moe_fragment_kernels DEPENDS ${_netra_fragment_cubin})
  netra_add_gpu_test(test_moe_fragments_gpu gpu/test_moe_fragments_gpu.cpp)
  add_dependencies(test_moe_fragments_gpu netra_moe_fragment_kernels)
  target_compile_definitions(test_moe_fragments_gpu PRIVATE NETRA_FRAGMENT_CUBIN="${_netra_fragment_cubin}")
endif()

# Negative compile tests: unsupported contract fields and out-of-range instruction fields fail
# to compile with a message naming them.
netra_add_compile_fail_test(negative_moe_gate_up_max_tokens negative/moe_gate_up_max_tokens.cpp
  "netra::contracts::moe_expert_gate_up: field MaxTokens must be in \\[1, 16\\]")
netra_add_compile_fail_test(negative_moe_gate_up_unsupported_target negative/moe_gate_up_unsupported_target.cpp
  "netra::contracts::moe_expert_gate_up: field Target is not supported; supported: netra::gfx950, netra::sm90a")
netra_add_compile_fail_test(negative_moe_gate_up_wave_size negative/moe_gate_up_wave_size.cpp
  "netra::contracts::moe_expert_gate_up: field WaveSize must equal the target's wave size")
netra_add_compile_fail_test(negative_moe_gate_up_schedule negative/moe_gate_up_schedule.cpp
  "netra::contracts::moe_expert_gate_up: field Schedule must be 0 \\(route_scan\\), 1 \\(unit_list\\) or 2 \\(resident\\)")
netra_add_compile_fail_test(negative_moe_gate_up_resident_target negative/moe_gate_up_resident_target.cpp
  "netra::contracts::moe_expert_gate_up: field Schedule 2 \\(resident\\) needs programmatic dependent launch")
netra_add_compile_fail_test(negative_moe_gate_up_staging_target negative/moe_gate_up_staging_target.cpp
  "netra::contracts::moe_expert_gate_up: field Staging 1 \\(lds_bulk_copy\\) needs the target's bulk copy")
netra_add_compile_fail_test(negative_moe_down_staging negative/moe_down_staging.cpp
  "netra::contracts::moe_expert_down: field Staging must be 0 \\(registers\\) or 1 \\(lds_bulk_copy\\)")
netra_add_compile_fail_test(negative_moe_down_input negative/moe_down_input.cpp
  "netra::contracts::moe_expert_down: field Input must be 0")
netra_add_compile_fail_test(negative_moe_down_fused_max_tokens negative/moe_down_fused_max_tokens.cpp
  "netra::contracts::moe_expert_down: field MaxTokens must be <= 4 with Input 1")
netra_add_compile_fail_test(negative_moe_down_max_tokens negative/moe_down_max_tokens.cpp
  "netra::contracts::moe_expert_down: field MaxTokens must be in \\[1, 16\\]")
netra_add_compile_fail_test(negative_fragment_unknown_shape negative/fragment_unknown_shape.cpp
  "netra::fragment_mma: not a fragment shape netra knows")

function(netra_moe_hip_compile_fail name source regex)
  add_test(NAME ${name}
           COMMAND ${NETRA_CLANG} -x hip --offload-arch=gfx950 --cuda-device-only -nogpulib -nogpuinc -std=c++20 -fsyntax-only
                   -I${PROJECT_SOURCE_DIR}/include ${CMAKE_CURRENT_SOURCE_DIR}/${source})
  set_tests_properties(${name} PROPERTIES PASS_REGULAR_EXPRESSION "${regex}" LABELS negative)
endfunction()
if(NETRA_CLANG)
  netra_moe_hip_compile_fail(negative_mfma_format_code negative/mfma_format_code.hip
    "netra::gfx950_isa: cbsz \\(format of A\\) must be 0 E4M3, 1 E5M2, 2 E2M3, 3 E3M2 or 4 E2M1")
  netra_moe_hip_compile_fail(negative_mfma_opsel negative/mfma_opsel.hip
    "netra::gfx950_isa: opsel selects a byte \\(0..3\\) of the 32-bit scale word")
  netra_moe_hip_compile_fail(negative_mfma_literal_scale_zero negative/mfma_literal_scale_zero.hip
    "netra::gfx950_isa: literal scale 0 trap")
  netra_moe_hip_compile_fail(negative_mfma_fp8_broadcast negative/mfma_fp8_broadcast.hip
    "v_mfma_f32_16x16x32_fp8_fp8: single-block instruction: cbsz and abid")
endif()
if(NETRA_NVCC)
  add_test(NAME negative_wgmma_wait_group
           COMMAND ${NETRA_NVCC} -std=c++20 -cubin -gencode=arch=compute_90a,code=sm_90a -I${PROJECT_SOURCE_DIR}/include
                   ${CMAKE_CURRENT_SOURCE_DIR}/negative/wgmma_wait_group.cu -o /dev/null)
  set_tests_properties(negative_wgmma_wait_group PROPERTIES PASS_REGULAR_EXPRESSION "wgmma_wait_group_sync_aligned: N is a small immediate"
                       LABELS negative)
endif()

# The gfx950 code objects of the expert kernels: MFMA present, every MFMA result read only after
# the wait states the hazard recognizer must insert (12 for 16x16x128), no scratch.
find_package(Python3 COMPONENTS Interpreter QUIET)
if(NETRA_CLANG AND NETRA_LLVM_OBJDUMP AND NETRA_LLVM_READELF AND Python3_FOUND AND TARGET netra_code_objects)
  add_test(NAME moe_experts_gfx950_disassembly
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/tools/check_mfma_hazards.py --objdump ${NETRA_LLVM_OBJDUMP}
                   --readelf ${NETRA_LLVM_READELF} --min-wait-states 12
                   ${NETRA_CODE_OBJECT_DIR}/moe-experts-gate-up-gfx950-16.hsaco ${NETRA_CODE_OBJECT_DIR}/moe-experts-down-gfx950-16-0.hsaco
                   ${NETRA_CODE_OBJECT_DIR}/moe-experts-down-gfx950-4-1.hsaco)
  set_tests_properties(moe_experts_gfx950_disassembly PROPERTIES LABELS audit)
endif()
if(NETRA_CLANG AND NETRA_LLVM_OBJDUMP AND Python3_FOUND)
  add_test(NAME gfx950_mfma_literal_scale_zero
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/tools/count_opcodes.py --clang ${NETRA_CLANG}
                   --objdump ${NETRA_LLVM_OBJDUMP} --include ${PROJECT_SOURCE_DIR}/include
                   --expect v_mfma_scale_f32_16x16x128_f8f6f4=2 --expect v_mfma_f32_16x16x128_f8f6f4=1
                   ${CMAKE_CURRENT_SOURCE_DIR}/tools/mfma_scale_zero.hip)
  set_tests_properties(gfx950_mfma_literal_scale_zero PROPERTIES LABELS audit)
endif()

# Where the decode block's time goes at M <= 16 (each chain prefix, each stage alone, fused vs
# unfused): bench/moe_decode_stages.py runs it on the GPU.
if(CUDAToolkit_FOUND AND TARGET netra_runtime)
  add_executable(netra-bench-moe-decode-stages ${PROJECT_SOURCE_DIR}/bench/moe_decode_stages.cpp)
  find_package(Threads REQUIRED)
  target_link_libraries(netra-bench-moe-decode-stages PRIVATE netra::runtime Boost::headers Threads::Threads ${CMAKE_DL_LIBS})
  target_include_directories(netra-bench-moe-decode-stages PRIVATE ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_SOURCE_DIR} ${CUDAToolkit_INCLUDE_DIRS})
  target_compile_options(netra-bench-moe-decode-stages PRIVATE ${NETRA_TEST_WARNINGS} -O2)
endif()
