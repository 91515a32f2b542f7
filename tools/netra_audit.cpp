// netra-audit: reads every built-in code object and checks each kernel against its contract's
// resource budget. Prints one row per contract x target x kernel (registers, LDS/shared,
// scratch/stack, spills, code bytes, instruction mix, workgroup size) and writes JSON.
// Exits 1 when a kernel exceeds its budget, an object is missing or built for the wrong target.
//
//   netra-audit --objects DIR [--json FILE] [--llvm-readelf PATH] [--llvm-objdump PATH]
//               [--skip-target T]... [--override FIELD=VALUE]...
//
// gfx950: resource counts from the AMDGPU metadata note (llvm-readelf --notes), code bytes from
// the symbol table, instruction mix from llvm-objdump over the kernel's symbol range.
// sm90a: registers from the .text.<kernel> section (sh_info >> 24) cross-checked with ptxas -v,
// stack and spills from ptxas -v, shared memory from .nv.shared.<kernel>, code bytes from the
// symbol (SASS instructions are 16 bytes), instruction mix from the PTX (no SASS disassembler is
// installed on CI machines).
#include <algorithm>
#include <array>
#include <cstring>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "netra/runtime/builtin_catalog.hpp"
#include "netra/runtime/code_object.hpp"
#include "netra/runtime/elf.hpp"
#include "netra/runtime/instance.hpp"
#include "netra/runtime/kernel_traits.hpp"

namespace fs = std::filesystem;
namespace hana = boost::hana;

namespace {

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

std::string run_command(const std::string& cmd) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return out;
  std::array<char, 4096> buf;
  while (size_t n = fread(buf.data(), 1, buf.size(), p)) out.append(buf.data(), n);
  pclose(p);
  return out;
}

std::string read_text(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

std::vector<std::byte> read_bytes(const fs::path& p) {
  const std::string s = read_text(p);
  std::vector<std::byte> b(s.size());
  std::memcpy(b.data(), s.data(), s.size());
  return b;
}

std::string quote(const std::string& s) { return "'" + s + "'"; }

// ---- AMD: metadata note as printed by llvm-readelf --notes (YAML), one map per kernel --------
std::map<std::string, std::map<std::string, std::string>> amd_kernel_metadata(const options& o, const fs::path& obj) {
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

long to_long(const std::map<std::string, std::string>& m, const std::string& k) {
  auto it = m.find(k);
  return it == m.end() ? -1 : std::strtol(it->second.c_str(), nullptr, 10);
}

void amd_instruction_mix(const options& o, const fs::path& obj, const std::string& mcpu, const netra::elf::symbol& sym, figures& f) {
  char range[96];
  std::snprintf(range, sizeof range, " --start-address=0x%llx --stop-address=0x%llx ", (unsigned long long)sym.value,
                (unsigned long long)(sym.value + sym.size));
  std::istringstream in(run_command(o.objdump + " -d --no-show-raw-insn --mcpu=" + mcpu + range + quote(obj.string()) + " 2>/dev/null"));
  static const std::regex insn(R"(^\s+([a-z][a-z0-9_]*))");
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (!std::regex_search(line, m, insn) || line.find(':') != std::string::npos && line.find('<') != std::string::npos) continue;
    const std::string op = m[1];
    ++f.instructions;
    if (op.rfind("v_mfma", 0) == 0) ++f.mix["mfma"];
    if (op == "ds_bpermute_b32" || op == "ds_permute_b32" || op == "ds_swizzle_b32" || op.find("_dpp") != std::string::npos ||
        op.find("permlane") != std::string::npos)
      ++f.mix["cross_lane"];
    if (op == "global_load_dwordx4" || op == "buffer_load_dwordx4") ++f.mix["load_16B"];
    if (op == "global_store_dwordx4" || op == "buffer_store_dwordx4") ++f.mix["store_16B"];
    if (op.rfind("ds_", 0) == 0 && op.find("permute") == std::string::npos && op.find("swizzle") == std::string::npos) ++f.mix["lds_ops"];
  }
}

// ---- NVIDIA: ptxas -v report and PTX ------------------------------------------------------------
struct ptxas_entry {
  long registers = -1, stack = -1, spill_stores = -1, spill_loads = -1, smem = 0;
};

std::map<std::string, ptxas_entry> parse_ptxas(const std::string& log) {
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
std::optional<long> nv_info_value(const netra::elf::image& img, std::uint8_t attribute, std::uint32_t symbol_index) {
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

void ptx_instruction_mix(const std::string& ptx, const std::string& kernel, figures& f) {
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

void check(figures& f, const char* what, long value, unsigned limit, bool applies = true) {
  if (applies && value > static_cast<long>(limit))
    f.violations.push_back(std::string(what) + " " + std::to_string(value) + " > budget " + std::to_string(limit));
}

netra::resource_budget apply_overrides(netra::resource_budget b, const options& o) {
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

template <class Contract> void audit_contract(const options& o, std::vector<figures>& rows, int& failures) {
  using target = typename Contract::target;
  const std::string inst = netra::instance_name<Contract>();
  const fs::path obj = o.objects / (inst + netra::code_object_suffix(target::id));
  if (o.skipped.count(target::name)) {
    std::cout << "SKIPPED  " << inst << ": no compiler for " << target::name << " on this machine\n";
    return;
  }
  if (!fs::exists(obj)) {
    std::cout << "FAIL     " << inst << ": code object " << obj << " is missing\n";
    ++failures;
    return;
  }
  const auto bytes = read_bytes(obj);
  const auto img = netra::elf::image::parse(bytes);
  const auto tgt = netra::code_object_target(bytes);
  if (!img || !tgt || *tgt != target::id) {
    std::cout << "FAIL     " << inst << ": " << obj << " is not a " << target::name << " code object\n";
    ++failures;
    return;
  }
  const netra::resource_budget budget = apply_overrides(Contract::budget(), o);

  std::map<std::string, std::map<std::string, std::string>> amd;
  std::map<std::string, ptxas_entry> nv;
  std::string ptx;
  if constexpr (netra::is_amd_v<target>) amd = amd_kernel_metadata(o, obj);
  else {
    nv = parse_ptxas(read_text(o.objects / (inst + ".ptxas.txt")));
    ptx = read_text(o.objects / (inst + ".ptx"));
  }

  auto one_kernel = [&](auto kt) {
    using kernel = typename decltype(kt)::type;
    figures f;
    f.instance = inst;
    f.contract = netra::contract_spelling<Contract>();
    f.target = target::name;
    f.kernel = kernel::symbol;
    f.declared_workgroup = kernel::workgroup_size;
    const auto sym = img->find_symbol(kernel::symbol);
    if (!sym || sym->type != 2) {
      f.violations.push_back("kernel symbol missing from the code object");
    } else {
      f.code_bytes = static_cast<long>(sym->size);
      if constexpr (netra::is_amd_v<target>) {
        const auto& md = amd[kernel::symbol];
        f.vgprs = to_long(md, ".vgpr_count");
        f.agprs = to_long(md, ".agpr_count");
        f.sgprs = to_long(md, ".sgpr_count");
        f.lds = to_long(md, ".group_segment_fixed_size");
        f.scratch = to_long(md, ".private_segment_fixed_size");
        f.spills = to_long(md, ".vgpr_spill_count") + to_long(md, ".sgpr_spill_count");
        f.object_workgroup = static_cast<unsigned>(to_long(md, ".max_flat_workgroup_size"));
        if (md.empty()) f.violations.push_back("no AMDGPU metadata for the kernel (llvm-readelf missing?)");
        else if (to_long(md, ".wavefront_size") != static_cast<long>(target::wave_size))
          f.violations.push_back("wavefront size differs from the target's");
        amd_instruction_mix(o, obj, target::name, *sym, f);
      } else {
        const auto it = nv.find(kernel::symbol);
        const long elf_regs = nv_info_value(*img, 0x2f, sym->index).value_or(-1);
        const auto* shared = img->find_section(std::string(".nv.shared.") + kernel::symbol);
        f.lds = shared ? static_cast<long>(shared->size) : 0;
        f.registers = elf_regs;
        f.instructions = f.code_bytes / 16;
        if (it == nv.end()) f.violations.push_back("no ptxas -v report for the kernel");
        else {
          if (it->second.registers != elf_regs) f.violations.push_back("ptxas register count disagrees with the cubin");
          f.scratch = it->second.stack;
          f.spills = it->second.spill_stores;
          f.lds = std::max(f.lds, it->second.smem);
        }
        ptx_instruction_mix(ptx, kernel::symbol, f);
      }
      if (f.object_workgroup != f.declared_workgroup)
        f.violations.push_back("workgroup size in the object (" + std::to_string(f.object_workgroup) + ") differs from the kernel's " +
                               std::to_string(f.declared_workgroup));
      if constexpr (netra::is_amd_v<target>) {
        check(f, "vgprs", f.vgprs, budget.max_vgprs);
        check(f, "agprs", f.agprs, budget.max_agprs);
        check(f, "sgprs", f.sgprs, budget.max_sgprs);
      } else {
        check(f, "registers", f.registers, budget.max_registers);
      }
      f.lds += static_cast<long>(netra::dynamic_lds_bytes_of<kernel>());  // a launch's dynamic LDS on top of the object's static
      check(f, "lds/shared bytes", f.lds, budget.max_lds_bytes);
      check(f, "scratch/stack bytes", f.scratch, budget.max_scratch_bytes);
      check(f, "spills", f.spills, budget.max_spills);
      check(f, "code bytes", f.code_bytes, budget.max_code_bytes, budget.max_code_bytes != 0);
    }
    if (!f.violations.empty()) ++failures;
    rows.push_back(std::move(f));
  };
  hana::for_each(netra::kernels::kernel_types_of<Contract>(), one_kernel);
}

std::string json_escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\';
    o += c;
  }
  return o;
}

void write_json(const std::string& path, const std::vector<figures>& rows) {
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

std::string cell(long v) { return v < 0 ? "-" : std::to_string(v); }

}  // namespace

int main(int argc, char** argv) {
  options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) { std::cerr << "netra-audit: " << a << " needs a value\n"; std::exit(2); }
      return argv[++i];
    };
    if (a == "--objects") o.objects = next();
    else if (a == "--json") o.json = next();
    else if (a == "--llvm-readelf") { auto v = next(); if (!v.empty() && v.find("NOTFOUND") == std::string::npos) o.readelf = v; }
    else if (a == "--llvm-objdump") { auto v = next(); if (!v.empty() && v.find("NOTFOUND") == std::string::npos) o.objdump = v; }
    else if (a == "--skip-target") o.skipped.insert(next());
    else if (a == "--override") {
      const std::string kv = next();
      const auto eq = kv.find('=');
      if (eq == std::string::npos) { std::cerr << "netra-audit: --override FIELD=VALUE\n"; return 2; }
      o.overrides[kv.substr(0, eq)] = static_cast<unsigned>(std::stoul(kv.substr(eq + 1)));
    } else { std::cerr << "netra-audit: unknown argument " << a << "\n"; return 2; }
  }
  if (o.objects.empty()) { std::cerr << "usage: netra-audit --objects DIR [--json FILE] ...\n"; return 2; }

  std::vector<figures> rows;
  int failures = 0;
  hana::for_each(netra::catalog::all, [&](auto t) { audit_contract<typename decltype(t)::type>(o, rows, failures); });

  std::printf("%-44s %-7s %-24s %4s %5s %5s %5s %5s %6s %7s %6s %6s %6s %5s %5s %5s %5s  %s\n", "instance", "target", "kernel", "wg", "vgpr",
              "agpr", "sgpr", "regs", "lds", "scratch", "spills", "code", "insts", "mma", "xlane", "ld16", "st16", "verdict");
  for (const auto& f : rows) {
    auto mix = [&](std::initializer_list<const char*> keys) {
      long n = 0;
      for (auto k : keys) { auto it = f.mix.find(k); if (it != f.mix.end()) n += it->second; }
      return n;
    };
    std::printf("%-44s %-7s %-24s %4u %5s %5s %5s %5s %6ld %7ld %6ld %6ld %6ld %5ld %5ld %5ld %5ld  %s\n", f.instance.c_str(), f.target.c_str(),
                f.kernel.c_str(), f.object_workgroup, cell(f.vgprs).c_str(), cell(f.agprs).c_str(), cell(f.sgprs).c_str(), cell(f.registers).c_str(),
                f.lds, f.scratch, f.spills, f.code_bytes, f.instructions, mix({"mfma", "mma_sync", "wgmma"}), mix({"cross_lane"}), mix({"load_16B"}),
                mix({"store_16B"}), f.violations.empty() ? "within budget" : "OVER BUDGET");
    for (const auto& v : f.violations) std::printf("    - %s\n", v.c_str());
  }
  if (!o.json.empty()) write_json(o.json, rows);
  std::printf("netra-audit: %zu kernels audited, %d failing%s\n", rows.size(), failures,
              o.skipped.empty() ? "" : " (some targets SKIPPED: see above)");
  return failures == 0 ? 0 : 1;
}
