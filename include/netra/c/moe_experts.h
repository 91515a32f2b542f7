/* netra/c/moe_experts.h — the decode MoE expert projections of Qwen3.6-35B-A3B (hidden 2048,
 * intermediate 512, 257 experts = 256 routed + the shared expert 256, FP8 E4M3 weights with
 * FP32 128 x 128 block scales; contracts/moe/expert_{gate_up,down}.hpp), through their tactic
 * lists. Conventions: netra/c/netra.h. Device pointers:
 *   hidden  BF16 [tokens, 2048]      ids      int32 [tokens, 9]    route_weights FP32 [tokens, 9]
 *   w13     E4M3 [257, 1024, 2048]   s13      FP32 [257, 8, 16]
 *   w2      E4M3 [257, 2048, 512]    s2       FP32 [257, 16, 4]
 * Route r = t * 9 + s is row r of the gate_up output and of act_quant's outputs. */
#ifndef NETRA_C_MOE_EXPERTS_H
#define NETRA_C_MOE_EXPERTS_H

#include "netra/c/netra.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct netra_moe_experts_handle netra_moe_experts_handle;

/* The activation input of down: act_quant's E4M3 [9 tokens, 512] + FP32 scales [9 tokens, 4],
 * or gate_up's BF16 [9 tokens, 1024] (act_quant fused; scales ignored; up to 4 tokens). */
typedef enum netra_moe_down_input { NETRA_MOE_DOWN_INPUT_E4M3 = 0, NETRA_MOE_DOWN_INPUT_GATE_UP_BF16 = 1 } netra_moe_down_input;

/* Loads the gate_up and down tactics for the calling thread's current device. */
NETRA_API netra_status netra_moe_experts_create(netra_moe_experts_handle** handle);
/* Releases the handle. NULL is ignored. */
NETRA_API void netra_moe_experts_destroy(netra_moe_experts_handle* handle);

/* out BF16 [9 tokens, 1024]: row r = W13[ids[r]] x per-128-quantized hidden[r / 9], block scaled
 * (1 <= tokens <= 16). NOT_SUPPORTED: no tactic admits the call (nothing launched). */
NETRA_API netra_status netra_moe_expert_gate_up(netra_moe_experts_handle* handle, const void* hidden, const int32_t* ids, const void* w13,
                                                const float* s13, void* out, int64_t tokens, void* stream);

/* out BF16 [tokens, 2048]: sum over the 9 routes of token t, in slot order, of
 * route_weights[t, s] * (W2[ids[t, s]] x act[t * 9 + s]), block scaled. */
NETRA_API netra_status netra_moe_expert_down(netra_moe_experts_handle* handle, const void* act, netra_moe_down_input input,
                                             const float* act_scales, const int32_t* ids, const float* route_weights, const void* w2,
                                             const float* s2, void* out, int64_t tokens, void* stream);

/* ---- the whole decode block -------------------------------------------------------------------
 * router -> shared-expert gate (route append) -> gate_up -> [act_quant] -> down with the weighted
 * route sum, recorded on `stream` (capturable into one CUDA graph). The caller owns every buffer:
 *   hidden BF16 [tokens, 2048], router_weight BF16 [256, 2048], shared_gate_weight BF16 [2048];
 *   written: ids int32 [tokens, 9], route_weights FP32 [tokens, 9], gate_up BF16 [9 tokens, 1024],
 *   act E4M3 [9 tokens, 512] and act_scales FP32 [9 tokens, 4] (unfused variant only; may be NULL
 *   for the fused one), out BF16 [tokens, 2048]. */
typedef struct netra_moe_block_handle netra_moe_block_handle;

typedef enum netra_moe_block_variant {
  NETRA_MOE_BLOCK_UNFUSED = 0, /* 5 kernels: ... gate_up, act_quant, down (1..16 tokens) */
  NETRA_MOE_BLOCK_FUSED = 1    /* 4 kernels: ... gate_up, down with act_quant fused (1..4 tokens) */
} netra_moe_block_variant;

NETRA_API netra_status netra_moe_block_create(netra_moe_block_handle** handle);
NETRA_API void netra_moe_block_destroy(netra_moe_block_handle* handle);
NETRA_API netra_status netra_moe_block(netra_moe_block_handle* handle, const void* hidden, const void* router_weight,
                                       const void* shared_gate_weight, const void* w13, const float* s13, const void* w2, const float* s2,
                                       int32_t* ids, float* route_weights, void* gate_up, void* act, float* act_scales, void* out,
                                       int64_t tokens, netra_moe_block_variant variant, void* stream);

#ifdef __cplusplus
}
#endif

#endif /* NETRA_C_MOE_EXPERTS_H */
