/* Compiled as C99 by the test moe_routing_c_header_is_c: netra/c/moe_routing.h is plain C. */
#include "netra/c/moe_routing.h"

int netra_moe_routing_c_header_compiles(void) {
  netra_moe_routing_handle* handle = 0;
  char text[8];
  size_t length = 0;
  int status = (int)netra_moe_routing_create(&handle);
  status += (int)netra_moe_act_quant(handle, 0, 9, 1024, 1024, 0, 0, 0);
  status += (int)netra_moe_router(handle, 0, 1, 2048, 2048, 0, 256, 0, 0, 0);
  status += (int)netra_moe_shared_gate(handle, 0, 1, 2048, 2048, 0, 0, 0, 0);
  status += (int)netra_moe_router_explain(handle, 0, 1, 2048, 2048, 0, 256, 0, 0, text, sizeof text, &length);
  netra_moe_routing_destroy(handle);
  return status;
}
