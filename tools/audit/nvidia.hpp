// tools/audit/nvidia.hpp — sm90a figures: the ptxas -v report, the cubin's .nv.info attributes,
// and the instruction mix from the PTX (no SASS disassembler on CI machines).
#pragma once
#include <optional>
#include <regex>

#include "netra/runtime/elf.hpp"
#include "common.hpp"

namespace netra::audit_tool {

// ---- NVIDIA: ptxas -v report and PTX ------------------------------------------------------------
struct ptxas_entry {
  long registers = -1, stack = -1, spill_stores = -1, spill_loads = -1, smem = 0;
};

inline std::map<std::string, ptxas_entry> parse_ptxas(const std::string& log) {
  std::map<std::string, ptxas_entry> out;
  std::istringstream in(log);
  std::string cur;
  static const std::regex entry(R"(Compiling entry function '([^']+)')");
  static const std::regex props(R"(Function properties for ([A-Za-z0-9_]+))");
  static const std::regex stack(R"((\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads)");
  static const std::regex used(R"(Used (\d+) registers)");
  static const std::regex smem(R"((\d+) bytes smem)");
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (std::regex_search(line, m, entry) || std::regex_search(line, m, props)) cur = m[1];
    if (cur.empty()) continue;
    if (std::regex_search(line, m, stack)) {
      out[cur].stack = std::stol(m[1]);
      out[cur].spill_stores = std::stol(m[2]);
      out[cur].spill_loads = std::stol(m[3]);
    }
    if (std::regex_search(line, m, used)) out[cur].registers = std::stol(m[1]);
    if (std::regex_search(line, m, smem)) out[cur].smem = std::stol(m[1]);
  }
  return out;
}

/// EIATTR values of the global .nv.info section that carry (symbol index, value) pairs:
/// 0x2f EIATTR_REGCOUNT, 0x11 EIATTR_FRAME_SIZE.
inline std::optional<long> nv_info_value(const netra::elf::image& img, std::uint8_t attribute, std::uint32_t symbol_index) {
  const auto* info = img.find_section(".nv.info");
  if (!info) return std::nullopt;
  const auto d = img.contents(*info);
  for (size_t o = 0; o + 4 <= d.size();) {
    const auto fmt = static_cast<std::uint8_t>(d[o]), attr = static_cast<std::uint8_t>(d[o + 1]);
    if (fmt != 4) { o += 4; continue; }  // EIFMT_SVAL carries a 16-bit size, the others 4 bytes in all
    std::uint16_t size;
    std::memcpy(&size, d.data() + o + 2, 2);
    if (attr == attribute && size == 8 && o + 12 <= d.size()) {
      std::uint32_t sym, value;
      std::memcpy(&sym, d.data() + o + 4, 4);
      std::memcpy(&value, d.data() + o + 8, 4);
      if (sym == symbol_index) return value;
    }
    o += 4 + size;
  }
  return std::nullopt;
}

inline void ptx_instruction_mix(const std::string& ptx, const std::string& kernel, figures& f) {
  const auto start = ptx.find(".entry " + kernel + "(");
  if (start == std::string::npos) return;
  const auto end = ptx.find("\n}", start);
  std::istringstream in(ptx.substr(start, end == std::string::npos ? std::string::npos : end - start));
  static const std::regex maxntid(R"(\.maxntid\s+(\d+))");
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (std::regex_search(line, m, maxntid)) f.object_workgroup = static_cast<unsigned>(std::stoul(m[1]));
    const bool v4 = line.find(".v4") != std::string::npos;
    const bool global = line.find(".global") != std::string::npos;
    if (line.find("ld.") != std::string::npos && global && v4) ++f.mix["load_16B"];
    if (line.find("st.") != std::string::npos && global && v4) ++f.mix["store_16B"];
    if (line.find("shfl.sync") != std::string::npos) ++f.mix["cross_lane"];
    if (line.find("mma.sync") != std::string::npos) ++f.mix["mma_sync"];
    if (line.find("wgmma.mma_async") != std::string::npos) ++f.mix["wgmma"];
  }
}

}  // namespace netra::audit_tool
