// netra/runtime/instance.hpp — naming and generating one contract instance on the host:
// its C++ spelling, its file-safe instance name (code objects are <instance><suffix>) and the
// translation unit that instantiates it (the same text the CMake helper writes at build time).
#pragma once
#include <string>

#include "netra/contracts/common.hpp"
#include "netra/runtime/code_object.hpp"

namespace netra {

/// "netra::contracts::argmax<netra::gfx950, 248320, 128, 128>"
template <class Contract> std::string contract_spelling() {
  std::string s = std::string(Contract::template_name) + "<" + Contract::target::spelling;
  for (const i64 a : Contract::template_args) s += ", " + std::to_string(a);
  return s + ">";
}

/// "argmax-gfx950-248320-128-128": unique per instance, safe in file names.
template <class Contract> std::string instance_name() {
  std::string s = std::string(Contract::family) + "-" + target_name(Contract::target::id);
  for (const i64 a : Contract::template_args) s += "-" + std::to_string(a);
  for (char& c : s)
    if (c == '_') c = '-';
  return s;
}

/// The instantiation translation unit of a contract spelled `spelling` of family `family`.
inline std::string instantiation_source(const std::string& family, const std::string& spelling) {
  return "#include <netra/instantiate/" + family + ".hpp>\nNETRA_INSTANTIATE(" + spelling + ")\n";
}
template <class Contract> std::string instantiation_source() {
  return instantiation_source(Contract::family, contract_spelling<Contract>());
}

}  // namespace netra
