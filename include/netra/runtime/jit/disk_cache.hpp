// netra/runtime/jit/disk_cache.hpp — the on-disk cache of JIT-compiled code objects.
//
// Location: $NETRA_CACHE_DIR, else $XDG_CACHE_HOME/netra, else ~/.cache/netra (never the
// install tree); entries live in <root>/jit-v1/<instance>.<key>.entry, key = the hex SHA-256
// of everything the compilation read (see compile.hpp).
//
// Entry layout (little-endian):
//   0  "NETRAJIT"      magic, 8 bytes
//   8  u32 version     (1)
//  12  u32 header size (88)
//  16  u64 payload length
//  24  32 bytes        SHA-256 of the payload
//  56  32 bytes        the cache key, binding the entry to its file name
//  88  payload         the code object
// A read accepts an entry only if every field matches and the file is exactly header + payload
// long; anything else (truncated, corrupted, foreign) is reported as a miss, and the caller
// rebuilds it. Writes go to a unique temporary file in the same directory, are flushed, then
// renamed over the entry: rename is atomic, so concurrent readers and writers (threads or
// processes) see either no entry or a complete one.
#pragma once
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "netra/runtime/error.hpp"
#include "netra/runtime/jit/sha256.hpp"

namespace netra::jit {

inline constexpr char entry_magic[8] = {'N', 'E', 'T', 'R', 'A', 'J', 'I', 'T'};
inline constexpr std::uint32_t entry_version = 1;
inline constexpr std::uint32_t entry_header_bytes = 88;
inline constexpr std::uint64_t entry_max_payload = std::uint64_t(1) << 30;

/// $NETRA_CACHE_DIR, else $XDG_CACHE_HOME/netra, else $HOME/.cache/netra. Throws
/// status::unavailable when none of them is set.
inline std::filesystem::path default_cache_root() {
  if (const char* dir = std::getenv("NETRA_CACHE_DIR"); dir && *dir) return dir;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return std::filesystem::path(xdg) / "netra";
  if (const char* home = std::getenv("HOME"); home && *home) return std::filesystem::path(home) / ".cache" / "netra";
  throw error(status::unavailable, "netra: no JIT cache directory: set NETRA_CACHE_DIR (or XDG_CACHE_HOME / HOME)");
}

/// Why a lookup missed.
enum class entry_state { valid, absent, corrupted };

struct entry_lookup {
  entry_state state = entry_state::absent;
  std::vector<std::byte> payload;  // the code object when valid
  std::string problem;             // what was wrong with a corrupted entry
};

class disk_cache {
 public:
  explicit disk_cache(std::filesystem::path root) : dir_(std::move(root) / "jit-v1") {}

  const std::filesystem::path& directory() const { return dir_; }

  std::filesystem::path entry_path(const std::string& instance, const digest& key) const {
    return dir_ / (instance + "." + to_hex(key) + ".entry");
  }

  /// The entry for (instance, key), checked field by field.
  entry_lookup load(const std::string& instance, const digest& key) const {
    entry_lookup r;
    const auto path = entry_path(instance, key);
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return r;
    std::vector<std::byte> bytes;
    const bool complete = read_all(fd, bytes);
    ::close(fd);
    r.state = entry_state::corrupted;
    if (!complete) {
      r.problem = "unreadable, or larger than any code object";
      return r;
    }
    if (bytes.size() < entry_header_bytes) {
      r.problem = "truncated header (" + std::to_string(bytes.size()) + " bytes)";
      return r;
    }
    const auto* h = reinterpret_cast<const unsigned char*>(bytes.data());
    if (std::memcmp(h, entry_magic, 8) != 0 || read_u32(h + 8) != entry_version || read_u32(h + 12) != entry_header_bytes) {
      r.problem = "bad magic, version or header size";
      return r;
    }
    const std::uint64_t length = read_u64(h + 16);
    if (length != bytes.size() - entry_header_bytes) {
      r.problem = "payload length " + std::to_string(length) + " but " + std::to_string(bytes.size() - entry_header_bytes) +
                  " bytes present (truncated or extended)";
      return r;
    }
    if (std::memcmp(h + 56, key.data(), key.size()) != 0) {
      r.problem = "entry belongs to another key";
      return r;
    }
    const std::span<const std::byte> payload(bytes.data() + entry_header_bytes, length);
    if (sha256_of(payload) != read_digest(h + 24)) {
      r.problem = "payload checksum mismatch";
      return r;
    }
    r.state = entry_state::valid;
    r.payload.assign(payload.begin(), payload.end());
    return r;
  }

  /// Writes the entry atomically (temporary file, flush, rename). Returns its path. Throws
  /// status::unavailable when the directory is not writable.
  std::filesystem::path store(const std::string& instance, const digest& key, std::span<const std::byte> payload) const {
    std::error_code ec;
    std::filesystem::create_directories(dir_, ec);
    if (ec) throw error(status::unavailable, "netra: cannot create JIT cache directory " + dir_.string() + ": " + ec.message());
    const auto path = entry_path(instance, key);
    const auto temporary = path.string() + ".tmp." + unique_suffix();
    const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) throw error(status::unavailable, "netra: cannot write JIT cache entry " + temporary + ": " + std::strerror(errno));
    std::vector<std::byte> header(entry_header_bytes);
    auto* h = reinterpret_cast<unsigned char*>(header.data());
    std::memcpy(h, entry_magic, 8);
    write_u32(h + 8, entry_version);
    write_u32(h + 12, entry_header_bytes);
    write_u64(h + 16, payload.size());
    const digest sum = sha256_of(payload);
    std::memcpy(h + 24, sum.data(), sum.size());
    std::memcpy(h + 56, key.data(), key.size());
    const bool written = write_all(fd, header) && write_all(fd, payload) && ::fsync(fd) == 0;
    const int saved = errno;
    ::close(fd);
    if (!written || std::rename(temporary.c_str(), path.c_str()) != 0) {
      const int why = written ? errno : saved;
      ::unlink(temporary.c_str());
      throw error(status::unavailable, "netra: cannot write JIT cache entry " + path.string() + ": " + std::strerror(why));
    }
    return path;
  }

 private:
  static std::uint32_t read_u32(const unsigned char* p) {
    std::uint32_t v = 0;
    for (int i = 3; i >= 0; --i) v = (v << 8) | p[i];
    return v;
  }
  static std::uint64_t read_u64(const unsigned char* p) {
    std::uint64_t v = 0;
    for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
    return v;
  }
  static digest read_digest(const unsigned char* p) {
    digest d{};
    std::memcpy(d.data(), p, d.size());
    return d;
  }
  static void write_u32(unsigned char* p, std::uint32_t v) {
    for (int i = 0; i < 4; ++i) p[i] = static_cast<unsigned char>(v >> (8 * i));
  }
  static void write_u64(unsigned char* p, std::uint64_t v) {
    for (int i = 0; i < 8; ++i) p[i] = static_cast<unsigned char>(v >> (8 * i));
  }

  static bool read_all(int fd, std::vector<std::byte>& out) {
    std::byte buffer[1 << 16];
    for (;;) {
      const ssize_t n = ::read(fd, buffer, sizeof buffer);
      if (n < 0) {
        if (errno == EINTR) continue;
        return false;
      }
      if (n == 0) return true;
      if (out.size() + static_cast<std::size_t>(n) > entry_max_payload + entry_header_bytes) return false;
      out.insert(out.end(), buffer, buffer + n);
    }
  }
  static bool write_all(int fd, std::span<const std::byte> bytes) {
    while (!bytes.empty()) {
      const ssize_t n = ::write(fd, bytes.data(), bytes.size());
      if (n < 0) {
        if (errno == EINTR) continue;
        return false;
      }
      bytes = bytes.subspan(static_cast<std::size_t>(n));
    }
    return true;
  }
  /// Unique among processes (pid) and among threads and calls of one process (counter, random).
  static std::string unique_suffix() {
    static std::atomic<unsigned> counter{0};
    thread_local std::mt19937_64 random{std::random_device{}()};
    return std::to_string(::getpid()) + "." + std::to_string(counter.fetch_add(1)) + "." + std::to_string(random() & 0xFFFFFFFFu);
  }

  std::filesystem::path dir_;
};

}  // namespace netra::jit
