// netra/runtime/error.hpp — status codes shared by the C++ runtime and the C ABI, and the
// exception that carries them with the underlying API's message.
#pragma once
#include <stdexcept>
#include <string>

namespace netra {

enum class status : int {
  ok = 0,
  invalid_argument = 1,   // a signature field was refused (null/misaligned pointer, shape, stride)
  not_supported = 2,      // no tactic admits the call: the caller runs its own implementation
  wrong_target = 3,       // a code object built for another target than the device or contract
  backend_error = 4,      // the CUDA driver / HIP runtime returned an error
  unavailable = 5,        // no driver, no device, or no compiler on this machine
  compile_error = 6,      // JIT compilation failed
  workspace_too_small = 7,
  internal = 8,
};

constexpr const char* status_name(status s) {
  switch (s) {
    case status::ok: return "ok";
    case status::invalid_argument: return "invalid_argument";
    case status::not_supported: return "not_supported";
    case status::wrong_target: return "wrong_target";
    case status::backend_error: return "backend_error";
    case status::unavailable: return "unavailable";
    case status::compile_error: return "compile_error";
    case status::workspace_too_small: return "workspace_too_small";
    case status::internal: return "internal";
  }
  return "unknown";
}

class error : public std::runtime_error {
 public:
  error(status code, const std::string& message) : std::runtime_error(message), code_(code) {}
  status code() const { return code_; }

 private:
  status code_;
};

}  // namespace netra
