// The consumer's program: checks its code objects are the targets it asked for and, where an
// NVIDIA GPU is present, runs its own argmax shape and compares with a plain loop.
#include <cstdio>
#include <filesystem>
#include <random>
#include <vector>

#include <netra/runtime/ops/argmax.hpp>

using my_argmax = netra::contracts::argmax<netra::sm90a, 151936, 64, 32>;

int main() {
  for (auto [file, target] : {std::pair{"my-argmax-gfx950.hsaco", netra::target_id::gfx950},
                              std::pair{"my-argmax-sm90a.cubin", netra::target_id::sm90a}}) {
    const auto path = std::filesystem::path(CODE_OBJECTS) / file;
    if (!std::filesystem::exists(path)) {
      std::printf("SKIPPED %s (its compiler is missing)\n", file);
      continue;
    }
    const auto t = netra::code_object_target(netra::read_file_bytes(path.string()));
    if (!t || *t != target) {
      std::printf("FAIL %s is not a %s code object\n", file, netra::target_name(target));
      return 1;
    }
    std::printf("ok   %s: %s\n", file, netra::target_name(*t));
  }
  netra::device_info device;
  try {
    device = netra::current_cuda_device();
  } catch (const netra::error& e) {
    std::printf("SKIPPED GPU run: %s\n", e.what());
    return 0;
  }
  const netra::handle<my_argmax> h(std::string(CODE_OBJECTS) + "/my-argmax-sm90a.cubin", device);
  std::vector<float> row(my_argmax::n);
  std::mt19937 rng(1);
  std::normal_distribution<float> dist;
  for (auto& x : row) x = dist(rng);
  const auto& d = netra::cuda::driver::get();
  CUdeviceptr logits = 0, out = 0;
  d.check(d.cuMemAlloc(&logits, row.size() * 4), "cuMemAlloc");
  d.check(d.cuMemAlloc(&out, 8), "cuMemAlloc");
  d.check(d.cuMemcpyHtoD(logits, row.data(), row.size() * 4), "cuMemcpyHtoD");
  netra::argmax(h, nullptr, reinterpret_cast<const float*>(logits), 1, my_argmax::n, my_argmax::n, reinterpret_cast<long*>(out));
  long got = -1;
  d.check(d.cuMemcpyDtoH(&got, out, 8), "cuMemcpyDtoH");
  long expect = 0;
  for (long j = 1; j < static_cast<long>(row.size()); ++j)
    if (row[j] > row[expect]) expect = j;
  std::printf("%s argmax %ld, expected %ld\n", got == expect ? "ok  " : "FAIL", got, expect);
  return got == expect ? 0 : 1;
}
