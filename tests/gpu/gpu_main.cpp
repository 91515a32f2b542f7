// Entry point of the GPU test binaries: run the doctest suite when a usable GPU is present,
// otherwise say why the tests were skipped and exit 77 (CTest: skipped).
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>

#include "netra/runtime/backend.hpp"

int main(int argc, char** argv) {
  try {
    const auto device = netra::current_cuda_device();
    std::printf("netra GPU tests on %s (%s, %d SMs)\n", device.name.c_str(), device.arch_name.c_str(), device.compute_units);
  } catch (const netra::error& e) {
    std::printf("SKIPPED: no GPU to run on: %s\n", e.what());
    return 77;
  }
  doctest::Context context(argc, argv);
  return context.run();
}
