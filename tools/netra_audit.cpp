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
#include <iostream>

#include "netra/runtime/builtin_catalog.hpp"
#include "netra/runtime/code_object.hpp"
#include "netra/runtime/elf.hpp"
#include "netra/runtime/instance.hpp"
#include "netra/runtime/kernel_traits.hpp"
#include "audit/amd.hpp"
#include "audit/common.hpp"
#include "audit/nvidia.hpp"
#include "audit/report.hpp"

namespace hana = boost::hana;
using namespace netra::audit_tool;

namespace {

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
                f.lds, f.scratch, f.spills, f.code_bytes, f.instructions, mix({"mfma", "wmma", "mma_sync", "wgmma"}), mix({"cross_lane"}), mix({"load_16B"}),
                mix({"store_16B"}), f.violations.empty() ? "within budget" : "OVER BUDGET");
    for (const auto& v : f.violations) std::printf("    - %s\n", v.c_str());
  }
  if (!o.json.empty()) write_json(o.json, rows);
  std::printf("netra-audit: %zu kernels audited, %d failing%s\n", rows.size(), failures,
              o.skipped.empty() ? "" : " (some targets SKIPPED: see above)");
  return failures == 0 ? 0 : 1;
}
