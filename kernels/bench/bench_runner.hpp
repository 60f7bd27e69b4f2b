#pragma once

#include <chrono>
#include <functional>
#include <vector>

#include "calibration/measurements.hpp"
#include "kernels/backend.hpp"
#include "kernels/bench/bench_suite.hpp"

namespace weft {

struct BenchOptions {
  int warmup = 1;   // untimed calls before the samples
  int samples = 5;  // timed samples per case and rank
  // A sample repeats a short call until it lasts about this long, and reports the mean call.
  double min_sample_ns = 2e5;
  // Longest wait for a communication op before the rank gives up with an error.
  std::chrono::seconds timeout{120};
  // Ranks on each node of the job, in rank order (0: all on one node): where groups are placed.
  int ranks_per_node = 0;
  std::function<void(std::size_t done, std::size_t total)> progress;
};

// Runs `cases` on every rank of `world` (the backend's communicator over the job) and returns,
// on rank 0, the measurements in the order of `cases` (empty elsewhere); the cases run in a
// seeded random order. Compute cases run on all ranks at once, as the
// ranks of a training job do, and pool their samples; a collective's sample is rank 0's group's
// slowest member's time, every group of its placement running at once; a send's is half a
// ping-pong between the two ranks of rank 0's pair.
std::vector<Measurement> run_bench(Backend& backend, Communicator& world, const std::vector<BenchCase>& cases,
                                   const BenchOptions& options);

}  // namespace weft
