// The gdn code objects, read back (gfx950 disassembly, sm90a PTX): the K0 verify core's only
// global stores are the output stores (2 bytes, or 4 with 2 columns per lane) — no state store
// exists in its code — while the committing cores (M16, replay) do store state; after every
// gfx950 transcendental in the precompute, conv and fused-precompute M16 objects, the next instruction does not read
// its result without a wait state (the trans-forwarding hazard of gfx940+; the conv has none: its
// SiLU division is branch-free fma / mul); and which packed FP32
// instructions the gfx950 recurrent core uses (reported).
#include <doctest/doctest.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "netra/runtime/catalog/gdn.hpp"
#include "netra/runtime/code_object.hpp"
#include "netra/runtime/elf.hpp"
#include "netra/runtime/instance.hpp"

using namespace netra;

namespace {
std::string run(const std::string& cmd) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE_MESSAGE(p, cmd);
  std::array<char, 4096> buf;
  while (std::size_t n = fread(buf.data(), 1, buf.size(), p)) out.append(buf.data(), n);
  pclose(p);
  return out;
}
std::string read(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  REQUIRE_MESSAGE(f.good(), "missing code object file ", path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

/// The instructions (mnemonic and operands) of kernel `symbol` in a gfx950 code object.
std::vector<std::pair<std::string, std::string>> gfx950_code(const std::string& object, const std::string& symbol) {
  const std::string bytes = read(object);
  std::vector<std::byte> b(bytes.size());
  std::memcpy(b.data(), bytes.data(), bytes.size());
  const auto img = elf::image::parse(b);
  REQUIRE(img);
  const auto sym = img->find_symbol(symbol);
  REQUIRE_MESSAGE(sym, symbol, " in ", object);
  char range[96];
  std::snprintf(range, sizeof range, " --start-address=0x%llx --stop-address=0x%llx ", (unsigned long long)sym->value,
                (unsigned long long)(sym->value + sym->size));
  std::istringstream in(run(std::string(NETRA_LLVM_OBJDUMP) + " -d --no-show-raw-insn --mcpu=gfx950" + range + "'" + object + "' 2>/dev/null"));
  static const std::regex insn(R"(^\s+([a-z][a-z0-9_]*)\s*([^/]*))");
  std::vector<std::pair<std::string, std::string>> code;
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (line.find('<') != std::string::npos || !std::regex_search(line, m, insn)) continue;
    code.emplace_back(m[1], m[2]);
  }
  REQUIRE(!code.empty());
  return code;
}

/// The st.global instructions of entry `kernel` in a PTX file.
std::vector<std::string> ptx_global_stores(const std::string& ptx, const std::string& kernel) {
  const auto start = ptx.find(".entry " + kernel + "(");
  REQUIRE(start != std::string::npos);
  const auto end = ptx.find("\n}", start);
  std::istringstream in(ptx.substr(start, end - start));
  std::vector<std::string> stores;
  static const std::regex st(R"(\b(st\.global[a-z0-9.]*))");
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (std::regex_search(line, m, st)) stores.push_back(m[1]);
  }
  return stores;
}

template <class C> std::string object(const char* suffix) { return std::string(NETRA_CODE_OBJECT_DIR) + "/" + instance_name<C>() + suffix; }

/// Registers a gfx950 operand list names (v7, v[14:15] -> v14, v15).
std::set<std::string> registers(const std::string& operands) {
  std::set<std::string> r;
  static const std::regex one(R"(\b([vs])(\d+)\b)"), range(R"(\b([vs])\[(\d+):(\d+)\])");
  for (auto it = std::sregex_iterator(operands.begin(), operands.end(), range); it != std::sregex_iterator(); ++it)
    for (int i = std::stoi((*it)[2]); i <= std::stoi((*it)[3]); ++i) r.insert((*it)[1].str() + std::to_string(i));
  for (auto it = std::sregex_iterator(operands.begin(), operands.end(), one); it != std::sregex_iterator(); ++it) r.insert((*it)[0]);
  return r;
}
}  // namespace

TEST_CASE_TEMPLATE("K0 stores only its BF16 outputs; the committing cores store state (gfx950 disassembly, sm90a PTX)", C,
                   contracts::gdn_k0<gfx950, 0>, contracts::gdn_k0<gfx950, 1>, contracts::gdn_k0<gfx950, 0, 16, 1>, contracts::gdn_m16<gfx950, 0>,
                   contracts::gdn_replay<gfx950, 1>, contracts::gdn_k0<sm90a, 0>, contracts::gdn_k0<sm90a, 1>, contracts::gdn_k0<sm90a, 0, 8, 1, 4>,
                   contracts::gdn_m16<sm90a, 0>, contracts::gdn_replay<sm90a, 1>, contracts::gdn_k0<sm90a, 0, 16, 1, 8, 2>,
                   contracts::gdn_k0<sm90a, 1, 16, 1, 8, 2>, contracts::gdn_k0<sm90a, 1, 16, 1, 4, 2>, contracts::gdn_m16<sm90a, 1, 16, 1, 2, 2>,
                   contracts::gdn_replay<sm90a, 1, 16, 1, 8, 2>, contracts::gdn_replay<sm90a, 1, 16, 1, 8, 2, 264>, contracts::gdn_m16<sm90a, 0, 8, 1, 4, 1, 1>,
                   contracts::gdn_m16<sm90a, 1, 8, 1, 4, 1, 1>, contracts::gdn_k0<sm90a, 0, 16, 3, 4, 2>, contracts::gdn_k0<sm90a, 1, 16, 3, 8, 2>,
                   contracts::gdn_m16<sm90a, 0, 8, 3, 4, 1, 1>, contracts::gdn_replay<sm90a, 0, 16, 3, 8, 2>, contracts::gdn_replay<sm90a, 1, 16, 3, 8, 2, 264>,
                   contracts::gdn_replay<sm90a, 0, 16, 3, 2, 2>, contracts::gdn_replay<sm90a, 1, 16, 3, 2, 2>) {
  std::set<std::string> stores;
  if constexpr (same_v<typename C::target, gfx950>) {
    for (const auto& [op, args] : gfx950_code(object<C>(".hsaco"), "netra_gdn_recurrent"))
      if (op.rfind("global_store", 0) == 0 || op.rfind("buffer_store", 0) == 0 || op.rfind("flat_store", 0) == 0 || op.rfind("scratch_store", 0) == 0)
        stores.insert(op);
  } else {
    for (const auto& s : ptx_global_stores(read(object<C>(".ptx")), "netra_gdn_recurrent")) stores.insert(s);
  }
  std::string list;
  for (const auto& s : stores) list += s + " ";
  INFO(instance_name<C>(), ": ", list);
  if constexpr (C::commit == gdn::state_commit::none) {
    CHECK(stores.size() == 1);
    if constexpr (C::columns_per_lane == 1)  // one BF16 output per lane
      CHECK((stores.count("global_store_short") == 1 || stores.count("st.global.u16") == 1 || stores.count("st.global.b16") == 1));
    else  // the outputs of a lane's adjacent columns, two BF16 a store
      CHECK((stores.count("global_store_dword") == 1 || stores.count("st.global.u32") == 1 || stores.count("st.global.b32") == 1));
  } else {
    CHECK((stores.count("global_store_dwordx4") == 1 || stores.count("st.global.v4.u32") == 1 || stores.count("st.global.v4.b32") == 1));
    if constexpr (C::commit == gdn::state_commit::accepted_prefix) CHECK(stores.size() == 1);  // no outputs either
  }
}

TEST_CASE_TEMPLATE("gfx950: no transcendental result is read by the next instruction without a wait state", C,
                   contracts::gdn_precompute<gfx950, 128, 12>, contracts::gdn_conv<gfx950, 64, 12, 0, 1>, contracts::gdn_conv<gfx950, 64, 12, 1, 0>,
                   contracts::gdn_m16<gfx950, 0, 16, 1, 4, 1, 1, gdn::core_inputs::raw>, contracts::gdn_m16<gfx950, 1, 16, 1, 4, 1, 1, gdn::core_inputs::raw>) {
  const std::string family = C::family;
  const std::string symbol = family == "gdn_conv" ? "netra_gdn_conv_update" : family == "gdn_precompute" ? "netra_gdn_precompute" : "netra_gdn_recurrent";
  const auto code = gfx950_code(object<C>(".hsaco"), symbol);
  static const std::set<std::string> trans = {"v_exp_f32", "v_log_f32", "v_rcp_f32", "v_rsq_f32", "v_sqrt_f32", "v_rcp_iflag_f32"};
  int transcendentals = 0, hazards = 0;
  for (std::size_t i = 0; i + 1 < code.size(); ++i) {
    std::string op = code[i].first;
    if (const auto e = op.find("_e32"); e != std::string::npos) op = op.substr(0, e);
    if (const auto e = op.find("_e64"); e != std::string::npos) op = op.substr(0, e);
    if (!trans.count(op)) continue;
    ++transcendentals;
    const std::string dest = code[i].second.substr(0, code[i].second.find(','));
    const auto& next = code[i + 1];
    if (next.first.rfind("s_nop", 0) == 0 || next.first.rfind("s_waitcnt", 0) == 0) continue;
    const std::string sources = next.second.find(',') == std::string::npos ? "" : next.second.substr(next.second.find(','));
    for (const auto& r : registers(dest))
      if (registers(sources).count(r)) {
        ++hazards;
        MESSAGE("hazard: ", code[i].first, " ", code[i].second, " then ", next.first, " ", next.second);
      }
  }
  MESSAGE(instance_name<C>(), ": ", transcendentals, " transcendental instructions");
  if (family == "gdn_conv") CHECK(transcendentals == 0);  // its SiLU division is branch-free fma / mul (kernels/gdn/conv_silu.hpp): no v_rcp_f32
  else CHECK(transcendentals > 0);  // the division / square-root sequences exist
  CHECK(hazards == 0);
}

TEST_CASE("gfx950: the K0 core's packed FP32 instructions (reported)") {
  const auto code = gfx950_code(object<contracts::gdn_k0<gfx950, 0>>(".hsaco"), "netra_gdn_recurrent");
  int pk_fma = 0, pk_mul = 0, fma = 0;
  for (const auto& [op, args] : code) {
    pk_fma += op.rfind("v_pk_fma_f32", 0) == 0;
    pk_mul += op.rfind("v_pk_mul_f32", 0) == 0;
    fma += op.rfind("v_fmac_f32", 0) == 0 || op.rfind("v_fma_f32", 0) == 0;
  }
  MESSAGE("K0 gfx950: v_pk_fma_f32 ", pk_fma, ", v_pk_mul_f32 ", pk_mul, ", scalar v_fma/v_fmac_f32 ", fma);
  CHECK(pk_fma >= 16);  // the state update k (x) u: 32 elements as 16 packed pairs
  CHECK(pk_mul >= 16);  // the decay: 32 elements as 16 packed pairs
}
