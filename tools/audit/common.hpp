// tools/audit/common.hpp — netra-audit's options, one kernel's figures, the helpers that run the
// LLVM tools and read files, and the budget check (tools/netra_audit.cpp).
#pragma once
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "netra/contracts/common.hpp"

namespace netra::audit_tool {
namespace fs = std::filesystem;

struct options {
  fs::path objects;
  std::string json;
  std::string readelf = "llvm-readelf-22";
  std::string objdump = "llvm-objdump-22";
  std::set<std::string> skipped;
  std::map<std::string, unsigned> overrides;
};

struct figures {
  std::string instance, contract, target, kernel;
  unsigned declared_workgroup = 0, object_workgroup = 0;
  long vgprs = -1, agprs = -1, sgprs = -1, registers = -1;
  long lds = 0, scratch = 0, spills = 0, code_bytes = 0, instructions = 0;
  std::map<std::string, long> mix;
  std::vector<std::string> violations;
};

inline std::string run_command(const std::string& cmd) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return out;
  std::array<char, 4096> buf;
  while (size_t n = fread(buf.data(), 1, buf.size(), p)) out.append(buf.data(), n);
  pclose(p);
  return out;
}

inline std::string read_text(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

inline std::vector<std::byte> read_bytes(const fs::path& p) {
  const std::string s = read_text(p);
  std::vector<std::byte> b(s.size());
  std::memcpy(b.data(), s.data(), s.size());
  return b;
}

inline std::string quote(const std::string& s) { return "'" + s + "'"; }

inline void check(figures& f, const char* what, long value, unsigned limit, bool applies = true) {
  if (applies && value > static_cast<long>(limit))
    f.violations.push_back(std::string(what) + " " + std::to_string(value) + " > budget " + std::to_string(limit));
}

inline netra::resource_budget apply_overrides(netra::resource_budget b, const options& o) {
  for (const auto& [k, v] : o.overrides) {
    if (k == "max_vgprs") b.max_vgprs = v;
    else if (k == "max_sgprs") b.max_sgprs = v;
    else if (k == "max_agprs") b.max_agprs = v;
    else if (k == "max_registers") b.max_registers = v;
    else if (k == "max_lds_bytes") b.max_lds_bytes = v;
    else if (k == "max_scratch_bytes") b.max_scratch_bytes = v;
    else if (k == "max_spills") b.max_spills = v;
    else if (k == "max_code_bytes") b.max_code_bytes = v;
    else { std::cerr << "netra-audit: unknown budget field " << k << "\n"; std::exit(2); }
  }
  return b;
}

}  // namespace netra::audit_tool
