// tools/audit/amd.hpp — AMD figures (gfx950, gfx942, gfx1151): the AMDGPU metadata note
// (llvm-readelf --notes) per kernel, and the instruction mix from llvm-objdump over the kernel's
// symbol range.
#pragma once
#include <regex>

#include "netra/runtime/elf.hpp"
#include "common.hpp"

namespace netra::audit_tool {

// ---- AMD: metadata note as printed by llvm-readelf --notes (YAML), one map per kernel --------
inline std::map<std::string, std::map<std::string, std::string>> amd_kernel_metadata(const options& o, const fs::path& obj) {
  std::map<std::string, std::map<std::string, std::string>> out;
  std::istringstream in(run_command(o.readelf + " --notes " + quote(obj.string()) + " 2>/dev/null"));
  std::map<std::string, std::string> cur;
  bool in_kernels = false;
  auto flush = [&] {
    if (cur.count(".name")) out[cur[".name"]] = cur;
    cur.clear();
  };
  static const std::regex kv(R"(^(  - |    )(\.[a-z_]+):\s*(.*)$)");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("amdhsa.kernels:", 0) == 0) { in_kernels = true; continue; }
    if (!in_kernels) continue;
    if (!line.empty() && line[0] != ' ') { flush(); in_kernels = false; continue; }
    std::smatch m;
    if (std::regex_match(line, m, kv)) {
      if (m[1] == "  - ") flush();
      cur[m[2]] = m[3];
    }
  }
  flush();
  return out;
}

inline long to_long(const std::map<std::string, std::string>& m, const std::string& k) {
  auto it = m.find(k);
  return it == m.end() ? -1 : std::strtol(it->second.c_str(), nullptr, 10);
}

inline void amd_instruction_mix(const options& o, const fs::path& obj, const std::string& mcpu, const netra::elf::symbol& sym, figures& f) {
  char range[96];
  std::snprintf(range, sizeof range, " --start-address=0x%llx --stop-address=0x%llx ", (unsigned long long)sym.value,
                (unsigned long long)(sym.value + sym.size));
  std::istringstream in(run_command(o.objdump + " -d --no-show-raw-insn --mcpu=" + mcpu + range + quote(obj.string()) + " 2>/dev/null"));
  static const std::regex insn(R"(^\s+([a-z][a-z0-9_]*))");
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (!std::regex_search(line, m, insn) || (line.find(':') != std::string::npos && line.find('<') != std::string::npos)) continue;
    const std::string op = m[1];
    ++f.instructions;
    if (op.rfind("v_mfma", 0) == 0) ++f.mix["mfma"];
    if (op.rfind("v_wmma", 0) == 0) ++f.mix["wmma"];  // gfx1151 (RDNA 3.5)
    if (op == "ds_bpermute_b32" || op == "ds_permute_b32" || op == "ds_swizzle_b32" || op.find("_dpp") != std::string::npos ||
        op.find("permlane") != std::string::npos)
      ++f.mix["cross_lane"];
    if (op == "global_load_dwordx4" || op == "buffer_load_dwordx4" || op == "global_load_b128" || op == "buffer_load_b128") ++f.mix["load_16B"];
    if (op == "global_store_dwordx4" || op == "buffer_store_dwordx4" || op == "global_store_b128" || op == "buffer_store_b128")
      ++f.mix["store_16B"];  // gfx9 and gfx11 (b128) spellings
    if (op.rfind("ds_", 0) == 0 && op.find("permute") == std::string::npos && op.find("swizzle") == std::string::npos) ++f.mix["lds_ops"];
  }
}

}  // namespace netra::audit_tool
