// netra/runtime/handle.hpp — a kernel handle per contract instance.
//
// Construction does everything that may allocate, look up or touch files: load the code object
// (embedded bytes or a path), check its target against the contract and the device, resolve
// every kernel of the contract once, and allocate and zero-fill the persistent workspace. launch() then only
// records the kernel on the caller's stream, which makes it safe inside graph capture.
#pragma once
#include <array>
#include <span>
#include <string>

#include "netra/runtime/backend.hpp"
#include "netra/runtime/device_memory.hpp"
#include "netra/runtime/kernel_traits.hpp"

namespace netra {

template <class Kernel, class List> struct kernel_index;
template <class Kernel, class... Rest> struct kernel_index<Kernel, type_list<Kernel, Rest...>> {
  static constexpr unsigned value = 0;
};
template <class Kernel, class First, class... Rest> struct kernel_index<Kernel, type_list<First, Rest...>> {
  static constexpr unsigned value = 1 + kernel_index<Kernel, type_list<Rest...>>::value;
};

template <class List> struct kernel_symbols;
template <class... Kernels> struct kernel_symbols<type_list<Kernels...>> {
  static constexpr std::array<const char*, sizeof...(Kernels)> value = {Kernels::symbol...};
};
/// What loading a contract's kernels needs to know about each (runtime/kernel_traits.hpp).
template <class List> struct kernel_load_traits;
template <class... Kernels> struct kernel_load_traits<type_list<Kernels...>> {
  static constexpr std::array<bool, sizeof...(Kernels)> max_lds = {prefers_max_lds<Kernels>()...};
  static constexpr std::array<u32, sizeof...(Kernels)> dynamic_bytes = {dynamic_lds_bytes_of<Kernels>()...};
  static constexpr std::array<u32, sizeof...(Kernels)> cluster_sizes = {cluster_size_of<Kernels>()...};
  static constexpr std::array<u32, sizeof...(Kernels)> workgroup_sizes = {Kernels::workgroup_size...};
};

template <class Contract> class handle {
 public:
  using contract = Contract;
  using kernels = typename kernels::kernels_of<Contract>::type;

  handle(std::span<const std::byte> code_object, const device_info& device)
      : device_(device), module_(module::load(code_object, Contract::target::id, device)),
        workspace_(device.api, Contract::workspace_bytes) {
    const auto& symbols = kernel_symbols<kernels>::value;
    using load = kernel_load_traits<kernels>;
    for (std::size_t i = 0; i < symbols.size(); ++i)
      functions_[i] = module_.function(symbols[i], load::max_lds[i], load::dynamic_bytes[i], load::cluster_sizes[i], load::workgroup_sizes[i]);
    workspace_.fill_zero();  // contracts require a zero-filled workspace before the first call
  }
  handle(const std::string& path, const device_info& device) : handle(read_file_bytes(path), device) {}

  /// Records `Kernel` with `params` on `stream`. No allocation, lookup or synchronisation.
  template <class Kernel> void launch(stream_handle stream, typename Kernel::params params, const launch_shape& shape) const {
    netra::launch(functions_[kernel_index<Kernel, kernels>::value], shape, stream, &params, Kernel::programmatic_dependent_launch,
                  cluster_size_of<Kernel>());
  }

  void* workspace() const { return workspace_.data(); }
  std::size_t workspace_bytes() const { return workspace_.size(); }
  const device_info& device() const { return device_; }

 private:
  device_info device_;
  module module_;
  device_buffer workspace_;
  std::array<kernel_function, kernels::size> functions_{};
};

}  // namespace netra
