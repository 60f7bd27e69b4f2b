// The main of every benchmark program: Google Benchmark's, with freed memory kept in the process
// as the weft CLI keeps it, so that repeated simulations measure what users get.
#include <benchmark/benchmark.h>

#include "simulator/core/allocator_tuning.hpp"

int main(int argc, char** argv) {
  weft::keep_freed_memory_for_reuse();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
