// netra/runtime/code_object.hpp — what target a code object was built for, read from its ELF
// header: AMDGPU e_flags carry the gfx mach, CUDA cubins carry the SM version in e_flags and the
// arch-specific variant (sm_90a) in the ptxas invocation recorded in .note.nv.tkinfo.
#pragma once
#include <fstream>
#include <iterator>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "netra/dsl/target.hpp"
#include "netra/runtime/elf.hpp"
#include "netra/runtime/error.hpp"

namespace netra {

/// Target of a code object, or nullopt if it is not an ELF code object netra knows.
inline std::optional<target_id> code_object_target(std::span<const std::byte> bytes) {
  const auto img = elf::image::parse(bytes);
  if (!img) return std::nullopt;
  if (img->machine() == elf::machine_amdgpu) {
    switch (img->flags() & 0xFFu) {  // EF_AMDGPU_MACH
      case 0x3F: return target_id::gfx90a;
      case 0x4C: return target_id::gfx942;
      case 0x4F: return target_id::gfx950;
      case 0x4A: return target_id::gfx1151;
      default: return std::nullopt;
    }
  }
  if (img->machine() == elf::machine_cuda) {
    if (((img->flags() >> 8) & 0xFFu) != 90) return std::nullopt;
    const auto* tk = img->find_section(".note.nv.tkinfo");
    if (tk == nullptr) return std::nullopt;
    const auto text = img->contents(*tk);
    const std::string_view s(reinterpret_cast<const char*>(text.data()), text.size());
    if (s.find("sm_90a") == std::string_view::npos) return std::nullopt;  // plain sm_90 lacks wgmma/setmaxnreg
    return target_id::sm90a;
  }
  return std::nullopt;
}

/// The bytes of a code object file; throws status::unavailable when it cannot be read.
inline std::vector<std::byte> read_file_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw error(status::unavailable, "netra: cannot open code object " + path);
  std::vector<char> chars((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::vector<std::byte> bytes(chars.size());
  for (std::size_t i = 0; i < chars.size(); ++i) bytes[i] = static_cast<std::byte>(chars[i]);
  return bytes;
}

/// File suffix of a target's code objects.
constexpr const char* code_object_suffix(target_id t) { return t == target_id::sm90a ? ".cubin" : ".hsaco"; }

}  // namespace netra
