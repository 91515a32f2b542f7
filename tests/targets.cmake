# gfx942 (MI300X, CDNA3, wave64, FP8 as E4M3FNUZ) and gfx1151 (RDNA 3.5, wave32, WMMA) — issue 31:
# the FP8 formats as types, the vector contracts that admit both targets, the matrix fragments and
# cross-lane selections against the instruction models, the contracts that refuse them (compile
# time, naming the supported set), and device compile checks of the raw wrappers. The code objects
# themselves are in the catalog (runtime/catalog/targets.hpp) and the audit (audit_within_budget).
# No gfx942 or gfx1151 GPU is available: nothing here runs on one.

netra_add_host_test(test_targets_host
  dsl/test_fp8_format.cpp
  dsl/test_target_lane_maps.cpp
  dsl/test_target_pieces.cpp
  dsl/test_target_attention_plan.cpp
  contracts/test_target_admission.cpp)
target_compile_options(test_targets_host PRIVATE -O2)

netra_add_compile_fail_test(negative_targets_gdn_recurrent_gfx1151 negative/targets_gdn_recurrent_gfx1151.cpp
  "netra::contracts::gdn_recurrent: field Target is not supported; supported: netra::gfx950, netra::sm90a")
netra_add_compile_fail_test(negative_targets_attention_gfx1151 negative/targets_attention_gfx1151.cpp
  "netra::contracts::attention_gqa8: field Target is not supported; supported: netra::gfx950, netra::sm90a, netra::gfx942")
netra_add_compile_fail_test(negative_targets_attention_format_gfx942 negative/targets_attention_format_gfx942.cpp
  "netra::contracts::attention_gqa8: field Format must be the FP8 format the target's conversion instruction reads")
netra_add_compile_fail_test(negative_targets_down_input0_gfx942 negative/targets_down_input0_gfx942.cpp
  "netra::contracts::moe_expert_down: field Input must be 1 \\(gate_up's BF16, act_quant fused\\) with an E4M3FNUZ Format")

# The raw wrappers compile for their targets and emit their instructions (tests/targets/*.hip).
if(NETRA_CLANG AND NETRA_LLVM_OBJDUMP)
  foreach(_t gfx942 gfx1151)
    if(_t STREQUAL "gfx942")
      set(_expect "v_med3_f32;v_cvt_pk_fp8_f32;v_mfma_f32_16x16x32_fp8_fp8;v_mfma_f32_16x16x16_bf16;v_cvt_pk_f32_fp8")
      set(_forbid "v_wmma")
    else()
      set(_expect "v_wmma_f32_16x16x16_bf16;row_xmask:1;row_xmask:8;v_permlanex16_b32")
      set(_forbid "ds_bpermute;v_mfma;v_cvt_pk_fp8")
    endif()
    add_test(NAME targets_isa_${_t}
             COMMAND ${CMAKE_COMMAND} -DCLANG=${NETRA_CLANG} -DOBJDUMP=${NETRA_LLVM_OBJDUMP} -DARCH=${_t}
                     -DSOURCE=${CMAKE_CURRENT_SOURCE_DIR}/targets/isa_${_t}.hip -DINCLUDE=${PROJECT_SOURCE_DIR}/include
                     -DOUT=${CMAKE_CURRENT_BINARY_DIR}/targets_isa_${_t}.hsaco "-DEXPECT=${_expect}" "-DFORBID=${_forbid}"
                     -P ${CMAKE_CURRENT_SOURCE_DIR}/tools/check_isa.cmake)
    set_tests_properties(targets_isa_${_t} PROPERTIES LABELS audit)
  endforeach()
endif()

