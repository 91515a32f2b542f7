/* Compiled as C99 by the test moe_routing_c_header_is_c: netra/c/moe_routing.h and
 * netra/c/moe_experts.h are plain C. */
#include "netra/c/moe_experts.h"
#include "netra/c/moe_routing.h"

int netra_moe_routing_c_header_compiles(void) {
  netra_moe_routing_handle* handle = 0;
  netra_moe_experts_handle* experts = 0;
  char text[8];
  size_t length = 0;
  int64_t shape[2] = {1, 2048};
  DLTensor hidden = {0, {kDLCUDA, 0}, 2, {kDLBfloat, 16, 1}, shape, 0, 0};
  int status = (int)netra_moe_routing_create(&handle);
  status += (int)netra_moe_act_quant(handle, &hidden, 0, 0, 0);
  status += (int)netra_moe_router(handle, &hidden, 0, 0, 0, 0);
  status += (int)netra_moe_shared_gate(handle, &hidden, 0, 0, 0, 0);
  status += (int)netra_moe_router_explain(handle, &hidden, 0, 0, 0, text, sizeof text, &length);
  status += (int)netra_moe_expert_gate_up(experts, &hidden, 0, 0, 0, 0, 0);
  status += (int)netra_moe_expert_down_explain(experts, 0, 0, 0, 0, 0, 0, 0, text, sizeof text, &length);
  netra_moe_routing_destroy(handle);
  return status;
}
