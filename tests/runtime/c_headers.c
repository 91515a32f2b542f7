/* Compiled as C99 by the test c_headers_are_c: netra's C headers are plain C. */
#include "netra/c/argmax.h"
#include "netra/c/netra.h"

int netra_c_headers_compile(void) {
  netra_argmax_handle* handle = 0;
  return (int)netra_argmax_create(&handle) + netra_abi_version();
}
