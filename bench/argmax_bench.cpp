// netra-bench-argmax: times the sm90a argmax instances through netra's C++ launch path,
// eager (a burst of back-to-back calls) and graph-replayed (the same burst captured once), with
// every call reading its own input set and the sets together covering 3x the L2, so each call
// reads cold data. Prints one JSON object per row count on stdout (median of the repetitions).
#include <algorithm>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "bench/gpu_timing.hpp"
#include "netra/runtime/instance.hpp"
#include "netra/runtime/ops/argmax.hpp"
#include "netra/runtime/tactics/sampling.hpp"


using netra::bench::drv;

template <class contract> void bench(const std::string& objects, const netra::device_info& device) {
  const netra::handle<contract> h(objects + "/" + netra::instance_name<contract>() + ".cubin", device);
  int l2 = 0;
  drv().check(drv().cuDeviceGetAttribute(&l2, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, device.ordinal), "L2 size");
  CUstream stream;
  drv().check(drv().cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  constexpr long n = contract::n;
  std::vector<float> host(static_cast<size_t>(contract::max_rows) * n);
  std::mt19937 rng(42);
  std::normal_distribution<float> dist;
  for (auto& x : host) x = dist(rng);

  for (long rows : {1L, 16L, 64L, 128L}) {
    const size_t bytes_in = static_cast<size_t>(rows) * n * 4;
    const int sets = static_cast<int>(std::max<size_t>(2, (3ull * l2 + bytes_in - 1) / bytes_in));
    std::vector<netra::device_buffer> inputs, outputs;
    for (int s = 0; s < sets; ++s) {
      inputs.emplace_back(netra::backend_api::cuda, bytes_in);
      outputs.emplace_back(netra::backend_api::cuda, static_cast<size_t>(rows) * 8);
      drv().check(drv().cuMemcpyHtoD(reinterpret_cast<CUdeviceptr>(inputs.back().data()), host.data(), bytes_in), "upload");
    }
    auto burst = [&] {
      for (int s = 0; s < sets; ++s)
        netra::argmax(h, stream, static_cast<const float*>(inputs[s].data()), rows, n, n, static_cast<long*>(outputs[s].data()));
    };
    const auto t = netra::bench::time_eager_and_graph(stream, sets, burst);
    // Stage one alone, graph-replayed: where the time of a call goes.
    using stage_one = netra::kernels::argmax_stage_one<contract>;
    auto burst_one = [&] {
      for (int s = 0; s < sets; ++s)
        h.template launch<stage_one>(stream, {static_cast<const float*>(inputs[s].data()), n, static_cast<unsigned long*>(h.workspace())},
                                     stage_one::shape(static_cast<unsigned>(rows)));
    };
    const double stage_one_graphed = netra::bench::graph_median_us(stream, sets, burst_one);

    const double bytes = static_cast<double>(bytes_in) + rows * contract::chunks * 8.0 * 2 + rows * 8.0;
    std::printf("{\"instance\": \"%s\", \"chunks\": %u, \"waves_per_workgroup\": %u, \"rows\": %ld, \"input_sets\": %d, \"bytes\": %.0f, "
                "\"netra_eager_us\": %.3f, \"netra_graph_us\": %.3f, \"stage_one_graph_us\": %.3f}\n",
                netra::instance_name<contract>().c_str(), contract::chunks, contract::waves_per_workgroup, rows, sets, bytes, t.eager_us, t.graph_us, stage_one_graphed);
  }
  drv().cuStreamDestroy(stream);
}

int main(int argc, char** argv) {
  const std::string objects = argc > 1 ? argv[1] : NETRA_CODE_OBJECT_DIR;
  const auto device = netra::current_cuda_device();
  // First the instance dispatch serves (bench/argmax.py reports it as netra's), then the others.
  bench<netra::tactics::argmax_served<netra::sm90a>>(objects, device);
  bench<netra::contracts::argmax_reference<netra::sm90a>>(objects, device);
  bench<netra::contracts::argmax<netra::sm90a, 248320, 128, 128, 1>>(objects, device);
  bench<netra::contracts::argmax<netra::sm90a, 248320, 128, 128, 8>>(objects, device);
  bench<netra::contracts::argmax<netra::sm90a, 248320, 256, 128>>(objects, device);
  bench<netra::contracts::argmax<netra::sm90a, 248320, 640, 128>>(objects, device);
  return 0;
}
