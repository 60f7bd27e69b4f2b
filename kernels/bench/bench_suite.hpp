#pragma once

#include <cstdint>
#include <string>
#include <utility>
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
  int ranks = 1;           // ranks of the job: collectives run over groups of 2, 4, ... up to all of them
  int ranks_per_node = 0;  // ranks on each node; 0: all on one node
};

// One op at one shape (the shape fields of Measurement).
struct BenchCase {
  OpClass op = OpClass::gemm;
  Dtype dtype = Dtype::bf16;
  std::vector<std::int64_t> shape;
  MeasurementSplit split = MeasurementSplit::fit;
  Kernel kernel = Kernel::any;  // GEMMs: the layout (nn, nt, tn)
  bool grid = true;             // GEMMs: false for a shape calibration fits as a point of its own
  std::string label{};          // what the shape is, for people (weft bench --scenario)
};

// The suite: for each part, a grid of shapes whose points calibration fits (log-spaced axes,
// every combination) and shapes between the grid points that it holds out to judge the fit.
// Sizes suit the backend: the CPU grids stop where one call takes about a second.
//   gemm         m, n, k over the axis points in layout nn, per dtype; the axis's cubes m = n = k
//                in layouts nt and tn too, off the grid (calibration scales the nn table for
//                those layouts by them); held-out shapes in the three layouts in turn
//   attention    forward and backward, causal and not, batch 1, over heads x sequence x head_dim
//   memory       the memory-bound op, inputs = outputs, over total bytes (x4 steps)
//   collectives  all-reduce, all-gather, reduce-scatter, all-to-all, broadcast over message
//                sizes (x4 steps) and group placements (group_placements)
//   p2p          send (ping-pong) over message sizes between two ranks of one node and of two
//                nodes
std::vector<BenchCase> bench_cases(const SuiteOptions& options);

// The communicator placements the suite measures on a job of `ranks`, `ranks_per_node` to a node
// (0: one node), as (group size, group ranks per node): inside a node 2, 4, ... ranks; across
// nodes, whole nodes 2, 4, ... and one rank on each of 2, 4, ... nodes. A group's placement runs
// on every rank that can form it at once, as a training step's groups of one kind do.
std::vector<std::pair<int, int>> group_placements(int ranks, int ranks_per_node);

}  // namespace weft
