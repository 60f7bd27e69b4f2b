#pragma once

#include <cstdint>
#include <vector>

#include "calibration/measurements.hpp"
#include "kernels/backend_factory.hpp"

namespace weft {

enum class BenchPart : std::uint8_t { gemm, attention, memory, collectives, p2p };
inline constexpr EnumNames<BenchPart, 5> kBenchPartNames({"gemm", "attention", "memory", "collectives", "p2p"});

struct SuiteOptions {
  BackendKind backend = BackendKind::cpu;
  bool quick = false;
  std::vector<Dtype> dtypes;  // of compute ops; communication is measured in bf16
  std::vector<BenchPart> parts;
  int ranks = 1;  // ranks of the job: collectives run over groups of 2, 4, ... up to all of them
};

// One op at one shape (the shape fields of Measurement).
struct BenchCase {
  OpClass op = OpClass::gemm;
  Dtype dtype = Dtype::bf16;
  std::vector<std::int64_t> shape;
  MeasurementSplit split = MeasurementSplit::fit;
};

// The suite: for each part, a grid of shapes whose points calibration fits (log-spaced axes,
// every combination) and shapes between the grid points that it holds out to judge the fit.
// Sizes suit the backend: the CPU grids stop where one call takes about a second.
//   gemm         m, n, k over the axis points, per dtype
//   attention    forward and backward, causal and not, batch 1, over heads x sequence x head_dim
//   memory       the memory-bound op, inputs = outputs, over total bytes (x4 steps)
//   collectives  all-reduce, all-gather, reduce-scatter, all-to-all, broadcast over message
//                sizes (x4 steps) and group sizes
//   p2p          send between ranks 0 and 1 (ping-pong) over message sizes
std::vector<BenchCase> bench_cases(const SuiteOptions& options);

}  // namespace weft
