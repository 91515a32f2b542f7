// tools/audit/report.hpp — netra-audit's JSON output and table cells.
#pragma once
#include "common.hpp"

namespace netra::audit_tool {

inline std::string json_escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\';
    o += c;
  }
  return o;
}

inline void write_json(const std::string& path, const std::vector<figures>& rows) {
  std::ofstream j(path);
  j << "{\n  \"kernels\": [\n";
  for (size_t i = 0; i < rows.size(); ++i) {
    const auto& f = rows[i];
    j << "    {\"instance\": \"" << f.instance << "\", \"contract\": \"" << json_escape(f.contract) << "\", \"target\": \"" << f.target
      << "\", \"kernel\": \"" << f.kernel << "\", \"workgroup_size\": " << f.object_workgroup << ", \"vgprs\": " << f.vgprs
      << ", \"agprs\": " << f.agprs << ", \"sgprs\": " << f.sgprs << ", \"registers\": " << f.registers << ", \"lds_bytes\": " << f.lds
      << ", \"scratch_bytes\": " << f.scratch << ", \"spills\": " << f.spills << ", \"code_bytes\": " << f.code_bytes
      << ", \"instructions\": " << f.instructions << ", \"mix\": {";
    bool first = true;
    for (const auto& [k, v] : f.mix) {
      j << (first ? "" : ", ") << "\"" << k << "\": " << v;
      first = false;
    }
    j << "}, \"within_budget\": " << (f.violations.empty() ? "true" : "false") << ", \"violations\": [";
    for (size_t v = 0; v < f.violations.size(); ++v) j << (v ? ", " : "") << "\"" << json_escape(f.violations[v]) << "\"";
    j << "]}" << (i + 1 < rows.size() ? "," : "") << "\n";
  }
  j << "  ]\n}\n";
}

inline std::string cell(long v) { return v < 0 ? "-" : std::to_string(v); }

}  // namespace netra::audit_tool
