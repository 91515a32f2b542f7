/* netra/c/attention.h is C: compiled as C99 with every warning (tests/attention.cmake). */
#include "netra/c/attention.h"

int netra_attention_c_header_is_c(void) { return NETRA_ATTENTION_VERIFY; }
