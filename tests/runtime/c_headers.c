/* Compiled as C99 by the test c_headers_are_c: netra's C headers are plain C. */
#include "netra/c/argmax.h"
#include "netra/c/netra.h"

int netra_c_headers_compile(void) {
  netra_argmax_handle* handle = 0;
  int64_t shape[2] = {1, 32768};
  int64_t rows[1] = {1};
  DLTensor logits = {0, {kDLCUDA, 0}, 2, {kDLFloat, 32, 1}, shape, 0, 0};
  DLTensor out = {0, {kDLCUDA, 0}, 1, {kDLInt, 64, 1}, rows, 0, 0};
  int status = (int)netra_argmax_create(&handle) + netra_abi_version();
  status += (int)netra_argmax(handle, &logits, &out, 0);
  return status;
}
