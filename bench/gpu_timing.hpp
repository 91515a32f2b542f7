// bench/gpu_timing.hpp — CUDA-event timing shared by the C++ benchmark drivers: a burst of calls
// timed eager (launched from the host) and graph-replayed (captured once under global capture
// mode, then replayed), median over repetitions of the time per call. docs/benchmarks.md.
#pragma once
#include <algorithm>
#include <vector>

#include "netra/runtime/cuda_driver.hpp"

namespace netra::bench {

inline const cuda::driver& drv() { return cuda::driver::get(); }

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

/// µs per call of `burst` (which issues `calls` calls on `stream`), once per repetition.
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

/// Median µs per call of `burst` captured once into a graph and replayed (3 warm replays first).
template <class Burst> double graph_median_us(CUstream stream, int calls, Burst burst, int reps = 30) {
  CUgraph graph;
  CUgraphExec exec;
  drv().check(drv().cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_GLOBAL), "cuStreamBeginCapture");
  burst();
  drv().check(drv().cuStreamEndCapture(stream, &graph), "cuStreamEndCapture");
  drv().check(drv().cuGraphInstantiateWithFlags(&exec, graph, 0), "cuGraphInstantiate");
  auto replay = [&] { drv().check(drv().cuGraphLaunch(exec, stream), "cuGraphLaunch"); };
  for (int w = 0; w < 3; ++w) replay();
  drv().check(drv().cuStreamSynchronize(stream), "cuStreamSynchronize");
  const double us = median(time_bursts(stream, reps, calls, replay));
  drv().cuGraphExecDestroy(exec);
  drv().cuGraphDestroy(graph);
  return us;
}

struct timing {
  double eager_us, graph_us;
};

/// Eager and graph-replayed median µs per call of `burst` (3 warm bursts first).
template <class Burst> timing time_eager_and_graph(CUstream stream, int calls, Burst burst, int reps = 30) {
  for (int w = 0; w < 3; ++w) burst();
  drv().check(drv().cuStreamSynchronize(stream), "cuStreamSynchronize");
  const double eager = median(time_bursts(stream, reps, calls, burst));
  return {eager, graph_median_us(stream, calls, burst, reps)};
}

}  // namespace netra::bench
