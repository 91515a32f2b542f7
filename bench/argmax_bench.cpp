// netra-bench-argmax: times the sm90a argmax instances through netra's C++ launch path,
// eager (a burst of back-to-back calls) and graph-replayed (the same burst captured once), with
// every call reading its own input set and the sets together covering 3x the L2, so each call
// reads cold data. Prints one JSON object per row count on stdout (median of the repetitions).
#include <algorithm>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "netra/runtime/instance.hpp"
#include "netra/runtime/ops/argmax.hpp"


namespace {
const netra::cuda::driver& drv() { return netra::cuda::driver::get(); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

template <class Burst> std::vector<double> time_bursts(CUstream stream, int reps, int calls, Burst burst) {
  CUevent start, stop;
  drv().check(drv().cuEventCreate(&start, CU_EVENT_DEFAULT), "cuEventCreate");
  drv().check(drv().cuEventCreate(&stop, CU_EVENT_DEFAULT), "cuEventCreate");
  std::vector<double> us;
  for (int r = 0; r < reps; ++r) {
    drv().check(drv().cuEventRecord(start, stream), "cuEventRecord");
    burst();
    drv().check(drv().cuEventRecord(stop, stream), "cuEventRecord");
    drv().check(drv().cuEventSynchronize(stop), "cuEventSynchronize");
    float ms = 0;
    drv().check(drv().cuEventElapsedTime(&ms, start, stop), "cuEventElapsedTime");
    us.push_back(ms * 1000.0 / calls);
  }
  drv().cuEventDestroy(start);
  drv().cuEventDestroy(stop);
  return us;
}
}  // namespace

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
    for (int w = 0; w < 3; ++w) burst();
    drv().check(drv().cuStreamSynchronize(stream), "sync");
    const double eager = median(time_bursts(stream, 30, sets, burst));

    CUgraph graph;
    CUgraphExec exec;
    drv().check(drv().cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_GLOBAL), "cuStreamBeginCapture");
    burst();
    drv().check(drv().cuStreamEndCapture(stream, &graph), "cuStreamEndCapture");
    drv().check(drv().cuGraphInstantiateWithFlags(&exec, graph, 0), "cuGraphInstantiate");
    auto replay = [&] { drv().check(drv().cuGraphLaunch(exec, stream), "cuGraphLaunch"); };
    for (int w = 0; w < 3; ++w) replay();
    drv().check(drv().cuStreamSynchronize(stream), "sync");
    const double graphed = median(time_bursts(stream, 30, sets, replay));
    drv().cuGraphExecDestroy(exec);
    drv().cuGraphDestroy(graph);

    // Stage one alone, graph-replayed: where the time of a call goes.
    using stage_one = netra::kernels::argmax_stage_one<contract>;
    auto burst_one = [&] {
      for (int s = 0; s < sets; ++s)
        h.template launch<stage_one>(stream, {static_cast<const float*>(inputs[s].data()), n, static_cast<unsigned long*>(h.workspace())},
                                     stage_one::shape(static_cast<unsigned>(rows)));
    };
    drv().check(drv().cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_GLOBAL), "cuStreamBeginCapture");
    burst_one();
    drv().check(drv().cuStreamEndCapture(stream, &graph), "cuStreamEndCapture");
    drv().check(drv().cuGraphInstantiateWithFlags(&exec, graph, 0), "cuGraphInstantiate");
    for (int w = 0; w < 3; ++w) replay();
    drv().check(drv().cuStreamSynchronize(stream), "sync");
    const double stage_one_graphed = median(time_bursts(stream, 30, sets, replay));
    drv().cuGraphExecDestroy(exec);
    drv().cuGraphDestroy(graph);

    const double bytes = static_cast<double>(bytes_in) + rows * contract::chunks * 8.0 * 2 + rows * 8.0;
    std::printf("{\"instance\": \"%s\", \"waves_per_workgroup\": %u, \"rows\": %ld, \"input_sets\": %d, \"bytes\": %.0f, "
                "\"netra_eager_us\": %.3f, \"netra_graph_us\": %.3f, \"stage_one_graph_us\": %.3f}\n",
                netra::instance_name<contract>().c_str(), contract::waves_per_workgroup, rows, sets, bytes, eager, graphed, stage_one_graphed);
  }
  drv().cuStreamDestroy(stream);
}

int main(int argc, char** argv) {
  const std::string objects = argc > 1 ? argv[1] : NETRA_CODE_OBJECT_DIR;
  const auto device = netra::current_cuda_device();
  bench<netra::contracts::argmax_reference<netra::sm90a>>(objects, device);
  bench<netra::contracts::argmax<netra::sm90a, 248320, 128, 128, 1>>(objects, device);
  bench<netra::contracts::argmax<netra::sm90a, 248320, 128, 128, 8>>(objects, device);
  return 0;
}
