// netra/runtime/decision_text.hpp — human-readable refusals (host only).
#pragma once
#include <string>

#include "netra/contracts/common.hpp"

namespace netra {
inline std::string to_string(const decision& d) {
  if (d.admitted()) return "admitted";
  return std::string("refused at field '") + d.field + "': requires " + d.requirement + ", got " + std::to_string(d.value);
}
}  // namespace netra
