/* netra/c/gdn.h compiles as C99 (the gdn C ABI is usable from C). */
#include "netra/c/gdn.h"

int netra_gdn_c_header_compiles(void) { return (int)NETRA_STATUS_OK; }
