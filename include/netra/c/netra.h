/* netra/c/netra.h — the core of netra's C ABI (libnetra): status codes, the thread-local last
 * error, and the conventions every per-operation header (argmax.h, ...) follows:
 *   - every call returns a netra_status; NETRA_STATUS_OK is 0;
 *   - netra_last_error() is the message of the calling thread's most recent netra call ("" after
 *     a call that succeeded);
 *   - NETRA_STATUS_NOT_SUPPORTED means no tactic admits the call: nothing was launched or
 *     written, and the caller runs its own implementation;
 *   - tensors are DLPack DLTensors (<dlpack/dlpack.h>, Debian's libdlpack-dev): data + byte_offset
 *     is the first element, shape and strides are in elements (strides NULL: compact row-major),
 *     the device must be the handle's (kDLCUDA / kDLROCM and its ordinal). Each operation's
 *     contract checks every tensor — element type, shape, strides, alignment, device — and a
 *     refused tensor is named with its value ("got float64", "got shape [9, 1000]", "got cpu").
 *     FP8 E4M3 tensors: DLPack 1.x code 10 (kDLFloat8_e4m3fn), or uint8 holding E4M3 bytes;
 *     netra reads only the fields DLPack 0.6 has. The DLTensor structs (and their shape/strides
 *     arrays) need to live only for the duration of the call;
 *   - streams are the caller's CUstream / hipStream_t (NULL: the legacy default stream);
 *   - a handle is created on the calling thread's current device and holds everything a launch
 *     needs; launching through it allocates nothing and never synchronises, so it may be
 *     captured into a CUDA / HIP graph. Calls through one handle share its workspace: order
 *     them on one stream (or use one handle per stream).
 * See docs/c-abi.md. */
#ifndef NETRA_C_NETRA_H
#define NETRA_C_NETRA_H

#include <dlpack/dlpack.h>
#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__)
#define NETRA_API __attribute__((visibility("default")))
#else
#define NETRA_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Mirrors netra::status (netra/runtime/error.hpp). */
typedef enum netra_status {
  NETRA_STATUS_OK = 0,
  NETRA_STATUS_INVALID_ARGUMENT = 1,    /* a refused field: null/misaligned pointer, shape, stride */
  NETRA_STATUS_NOT_SUPPORTED = 2,       /* no tactic admits the call: run your own implementation */
  NETRA_STATUS_WRONG_TARGET = 3,        /* a code object for another target than the device */
  NETRA_STATUS_BACKEND_ERROR = 4,       /* the CUDA driver / HIP runtime returned an error */
  NETRA_STATUS_UNAVAILABLE = 5,         /* no driver, no device, or no compiler */
  NETRA_STATUS_COMPILE_ERROR = 6,       /* JIT compilation failed */
  NETRA_STATUS_WORKSPACE_TOO_SMALL = 7,
  NETRA_STATUS_INTERNAL = 8
} netra_status;

/* The message of this thread's most recent netra call; never NULL. Valid until the thread's
 * next netra call. */
NETRA_API const char* netra_last_error(void);

/* "ok", "invalid_argument", ... */
NETRA_API const char* netra_status_name(netra_status status);

/* The version of this ABI (bumped on incompatible changes; 2: tensors are DLTensors). */
#define NETRA_ABI_VERSION 2
NETRA_API int netra_abi_version(void);

#ifdef __cplusplus
}
#endif

#endif /* NETRA_C_NETRA_H */
