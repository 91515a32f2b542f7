// netra/runtime/embedded_objects.hpp — the code objects of the build-time catalog, embedded in
// libnetra. The build generates one source that pulls every <instance>.hsaco / .cubin into
// read-only data (cmake/netra_runtime.cmake) and defines embedded_code_objects(); looking an
// instance up is a linear scan over a few names, done once per handle, never on a launch path.
// Code using this header links libnetra (netra::runtime).
#pragma once
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "netra/runtime/error.hpp"
#include "netra/runtime/instance.hpp"

namespace netra {

/// One embedded code object: the instance name (argmax-sm90a-248320-128-128) and its bytes.
struct embedded_object {
  const char* instance;
  const unsigned char* data;
  std::size_t size;
};

/// Every code object embedded in this libnetra, in catalog order.
__attribute__((visibility("default"))) std::span<const embedded_object> embedded_code_objects();

/// The embedded bytes of `instance`, or nullopt when this libnetra does not carry it (its
/// target's compiler was missing at build time, or it is not a build-time instance).
inline std::optional<std::span<const std::byte>> find_embedded_code_object(std::string_view instance) {
  for (const embedded_object& o : embedded_code_objects())
    if (instance == o.instance) return std::span<const std::byte>(reinterpret_cast<const std::byte*>(o.data), o.size);
  return std::nullopt;
}

/// The embedded code object of `Contract`; throws status::not_supported when it is absent.
template <class Contract> std::span<const std::byte> embedded_code_object() {
  const std::string name = instance_name<Contract>();
  if (const auto bytes = find_embedded_code_object(name)) return *bytes;
  throw error(status::not_supported, "netra: " + name + " is not embedded in this libnetra (not a build-time instance, or its "
                                     "target's compiler was missing when libnetra was built)");
}

}  // namespace netra
