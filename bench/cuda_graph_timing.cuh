// bench/cuda_graph_timing.cuh — CUDA-runtime timing shared by the standalone floor benchmarks
// (argmax_read_floor.cu, act_quant_copy_floor.cu): a burst of calls captured once into a graph,
// 3 warm replays, then the median over 30 replays of the time per call (CUDA events). The same
// method as bench/gpu_timing.hpp, which the netra drivers use through the driver API.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace floor_bench {

inline void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "floor benchmark: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

/// Median µs per call of `burst` (which records `calls` calls on `stream`), graph-replayed.
template <class Burst> double graph_median_us(cudaStream_t stream, int calls, Burst burst) {
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  check(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal), "capture");
  burst();
  check(cudaStreamEndCapture(stream, &graph), "capture");
  check(cudaGraphInstantiate(&exec, graph, 0), "instantiate");
  cudaEvent_t start, stop;
  check(cudaEventCreate(&start), "event");
  check(cudaEventCreate(&stop), "event");
  for (int w = 0; w < 3; ++w) check(cudaGraphLaunch(exec, stream), "replay");
  std::vector<double> us;
  for (int r = 0; r < 30; ++r) {
    check(cudaEventRecord(start, stream), "event");
    check(cudaGraphLaunch(exec, stream), "replay");
    check(cudaEventRecord(stop, stream), "event");
    check(cudaEventSynchronize(stop), "sync");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, start, stop), "elapsed");
    us.push_back(ms * 1000.0 / calls);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  return median(us);
}

}  // namespace floor_bench
