// netra/runtime/elf.hpp — a read-only view of an ELF64 little-endian image (code objects:
// AMDGPU .hsaco and NVIDIA .cubin). Bounds-checked: a truncated or malformed image yields
// std::nullopt or an empty result, never an out-of-bounds read.
#pragma once
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace netra::elf {

inline constexpr std::uint16_t machine_amdgpu = 224;  // EM_AMDGPU
inline constexpr std::uint16_t machine_cuda = 190;    // EM_CUDA

struct section {
  std::string_view name;
  std::uint32_t type = 0;
  std::uint64_t flags = 0;
  std::uint64_t offset = 0;
  std::uint64_t size = 0;
  std::uint32_t link = 0;
  std::uint32_t info = 0;
  std::uint64_t entry_size = 0;
};

struct symbol {
  std::string_view name;
  std::uint64_t value = 0;
  std::uint64_t size = 0;
  std::uint8_t type = 0;  // STT_*: 1 object, 2 func
  std::uint16_t section_index = 0;
  std::uint32_t index = 0;  // position in its symbol table
};

class image {
 public:
  /// Parses the headers; returns nullopt unless `bytes` is a complete ELF64 little-endian image.
  static std::optional<image> parse(std::span<const std::byte> bytes) {
    image img;
    img.bytes_ = bytes;
    if (bytes.size() < 64) return std::nullopt;
    const auto* b = reinterpret_cast<const unsigned char*>(bytes.data());
    if (std::memcmp(b, "\x7f" "ELF", 4) != 0 || b[4] != 2 || b[5] != 1) return std::nullopt;
    img.os_abi_ = b[7];
    img.abi_version_ = b[8];
    img.machine_ = img.read<std::uint16_t>(18);
    img.flags_ = img.read<std::uint32_t>(48);
    const std::uint64_t shoff = img.read<std::uint64_t>(40);
    const std::uint16_t shentsize = img.read<std::uint16_t>(58);
    const std::uint16_t shnum = img.read<std::uint16_t>(60);
    const std::uint16_t shstrndx = img.read<std::uint16_t>(62);
    if (shnum == 0 || shentsize < 64 || shstrndx >= shnum || !img.in_range(shoff, std::uint64_t(shnum) * shentsize))
      return std::nullopt;
    std::vector<section> raw(shnum);
    std::vector<std::uint32_t> name_offsets(shnum);
    for (std::uint16_t i = 0; i < shnum; ++i) {
      const std::uint64_t h = shoff + std::uint64_t(i) * shentsize;
      name_offsets[i] = img.read<std::uint32_t>(h);
      raw[i].type = img.read<std::uint32_t>(h + 4);
      raw[i].flags = img.read<std::uint64_t>(h + 8);
      raw[i].offset = img.read<std::uint64_t>(h + 24);
      raw[i].size = img.read<std::uint64_t>(h + 32);
      raw[i].link = img.read<std::uint32_t>(h + 40);
      raw[i].info = img.read<std::uint32_t>(h + 44);
      raw[i].entry_size = img.read<std::uint64_t>(h + 56);
      if (raw[i].type != 8 /*NOBITS*/ && !img.in_range(raw[i].offset, raw[i].size)) return std::nullopt;
    }
    const section& names = raw[shstrndx];
    for (std::uint16_t i = 0; i < shnum; ++i) raw[i].name = img.string_at(names, name_offsets[i]);
    img.sections_ = std::move(raw);
    return img;
  }

  std::uint16_t machine() const { return machine_; }
  std::uint32_t flags() const { return flags_; }
  std::uint8_t os_abi() const { return os_abi_; }
  std::uint8_t abi_version() const { return abi_version_; }
  const std::vector<section>& sections() const { return sections_; }

  const section* find_section(std::string_view name) const {
    for (const auto& s : sections_)
      if (s.name == name) return &s;
    return nullptr;
  }

  std::span<const std::byte> contents(const section& s) const {
    if (s.type == 8) return {};
    return bytes_.subspan(s.offset, s.size);
  }

  /// All entries of every SYMTAB section.
  std::vector<symbol> symbols() const {
    std::vector<symbol> out;
    for (const auto& s : sections_) {
      if (s.type != 2 /*SYMTAB*/ || s.entry_size < 24 || s.link >= sections_.size()) continue;
      const section& strtab = sections_[s.link];
      std::uint32_t index = 0;
      for (std::uint64_t off = s.offset; off + 24 <= s.offset + s.size; off += s.entry_size, ++index) {
        symbol sym;
        sym.index = index;
        sym.name = string_at(strtab, read<std::uint32_t>(off));
        sym.type = static_cast<std::uint8_t>(read<std::uint8_t>(off + 4) & 0xF);
        sym.section_index = read<std::uint16_t>(off + 6);
        sym.value = read<std::uint64_t>(off + 8);
        sym.size = read<std::uint64_t>(off + 16);
        out.push_back(sym);
      }
    }
    return out;
  }

  std::optional<symbol> find_symbol(std::string_view name) const {
    for (const auto& s : symbols())
      if (s.name == name) return s;
    return std::nullopt;
  }

  /// Each note (name, type, descriptor) of a NOTE section.
  struct note {
    std::string_view owner;
    std::uint32_t type;
    std::span<const std::byte> descriptor;
  };
  std::vector<note> notes(const section& s) const {
    std::vector<note> out;
    if (s.type != 7 /*NOTE*/) return out;
    std::uint64_t off = s.offset;
    const std::uint64_t end = s.offset + s.size;
    while (off + 12 <= end) {
      const std::uint32_t namesz = read<std::uint32_t>(off), descsz = read<std::uint32_t>(off + 4);
      const std::uint32_t type = read<std::uint32_t>(off + 8);
      const std::uint64_t name_off = off + 12, desc_off = name_off + ((namesz + 3u) & ~3u);
      const std::uint64_t next = desc_off + ((descsz + 3u) & ~3u);
      if (next > end || !in_range(desc_off, descsz)) break;
      std::string_view owner(reinterpret_cast<const char*>(bytes_.data()) + name_off, namesz ? namesz - 1 : 0);
      out.push_back(note{owner, type, bytes_.subspan(desc_off, descsz)});
      off = next;
    }
    return out;
  }

 private:
  bool in_range(std::uint64_t off, std::uint64_t len) const { return off <= bytes_.size() && len <= bytes_.size() - off; }
  template <class T> T read(std::uint64_t off) const {
    T v{};
    if (in_range(off, sizeof(T))) std::memcpy(&v, bytes_.data() + off, sizeof(T));
    return v;
  }
  std::string_view string_at(const section& table, std::uint64_t off) const {
    if (table.type == 8 || off >= table.size) return {};
    const char* p = reinterpret_cast<const char*>(bytes_.data()) + table.offset + off;
    const std::uint64_t max = table.size - off;
    return std::string_view(p, strnlen(p, max));
  }

  std::span<const std::byte> bytes_;
  std::vector<section> sections_;
  std::uint16_t machine_ = 0;
  std::uint32_t flags_ = 0;
  std::uint8_t os_abi_ = 0, abi_version_ = 0;
};

}  // namespace netra::elf
