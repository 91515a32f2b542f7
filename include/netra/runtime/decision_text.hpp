// netra/runtime/decision_text.hpp — refusals as text and as the status a caller reports (host only).
#pragma once
#include <string>
#include <string_view>

#include "netra/contracts/common.hpp"
#include "netra/runtime/error.hpp"

namespace netra {
inline std::string to_string(const decision& d) {
  if (d.admitted()) return "admitted";
  std::string got = std::to_string(d.value);
  if (d.kind == value_kind::target) got = target_name(static_cast<target_id>(d.value));
  if (d.kind == value_kind::dtype) got = dtype_name(static_cast<dtype>(d.value));
  return std::string("refused at field '") + d.field + "': requires " + d.requirement + ", got " + got;
}

/// The status of a refused call: a workspace smaller than the call needs is
/// workspace_too_small, every other refusing field invalid_argument.
inline status refusal_status(const decision& d) {
  return std::string_view(d.field) == "workspace_bytes" ? status::workspace_too_small : status::invalid_argument;
}
}  // namespace netra
