#include <catch2/catch.hpp>

#include <map>
#include <set>

#include "kernels/bench/bench_suite.hpp"

namespace weft {
namespace {

SuiteOptions options(BackendKind backend, bool quick, int ranks) {
  SuiteOptions o;
  o.backend = backend;
  o.quick = quick;
  o.ranks = ranks;
  o.dtypes = {Dtype::bf16, Dtype::fp32};
  o.parts = {BenchPart::gemm, BenchPart::attention, BenchPart::memory, BenchPart::collectives, BenchPart::p2p};
  return o;
}

TEST_CASE("the fit GEMMs of a suite form a complete grid and the held-out ones lie inside it", "[kernels][bench]") {
  for (BackendKind backend : {BackendKind::cpu, BackendKind::cuda}) {
    for (bool quick : {false, true}) {
      std::set<std::int64_t> axis;
      std::set<std::vector<std::int64_t>> fit;
      std::map<Kernel, std::set<std::vector<std::int64_t>>> off_grid;
      std::set<Kernel> held_out_layouts;
      std::vector<std::vector<std::int64_t>> held_out;
      for (const BenchCase& c : bench_cases(options(backend, quick, 1))) {
        if (c.op != OpClass::gemm || c.dtype != Dtype::bf16) continue;
        if (c.split == MeasurementSplit::holdout) {
          held_out.push_back(c.shape);
          held_out_layouts.insert(c.kernel);
        } else if (c.grid) {
          CHECK(c.kernel == Kernel::nn);  // calibration fits the table of one layout
          fit.insert(c.shape);
          axis.insert(c.shape.begin(), c.shape.end());
        } else {
          off_grid[c.kernel].insert(c.shape);
        }
      }
      CHECK(fit.size() == axis.size() * axis.size() * axis.size());
      // The other two layouts at the grid's cubes, which calibration compares with the nn table.
      std::set<std::vector<std::int64_t>> cubes;
      for (std::int64_t x : axis) cubes.insert({x, x, x});
      CHECK(off_grid ==
            std::map<Kernel, std::set<std::vector<std::int64_t>>>{{Kernel::nt, cubes}, {Kernel::tn, cubes}});
      // Held-out shapes take the three layouts in turn.
      CHECK(held_out_layouts == (held_out.size() >= 3 ? std::set<Kernel>{Kernel::nn, Kernel::nt, Kernel::tn}
                                                      : std::set<Kernel>{Kernel::nn, Kernel::nt}));
      for (const auto& shape : held_out) {
        for (std::int64_t x : shape) {
          CHECK(x >= *axis.begin());
          CHECK(x <= *axis.rbegin());
        }
      }
    }
  }
}

TEST_CASE("communication is measured over every group size the job allows", "[kernels][bench]") {
  auto groups = [](int ranks) {
    std::set<std::int64_t> sizes;
    for (const BenchCase& c : bench_cases(options(BackendKind::cpu, true, ranks))) {
      if (c.op == OpClass::allreduce) sizes.insert(c.shape[1]);
    }
    return sizes;
  };
  CHECK(groups(1).empty());
  CHECK(groups(2) == std::set<std::int64_t>{2});
  CHECK(groups(6) == std::set<std::int64_t>{2, 4, 6});
  for (const BenchCase& c : bench_cases(options(BackendKind::cpu, true, 6))) {
    if (c.op == OpClass::reducescatter) CHECK(c.shape[0] % (2 * c.shape[1]) == 0);
    if (c.op == OpClass::reducescatter) CHECK(c.shape[2] == c.shape[1]);  // one node: every group inside it
  }
}

TEST_CASE("on several nodes communication is measured inside a node, over whole nodes and one rank per node",
          "[kernels][bench]") {
  using Placements = std::vector<std::pair<int, int>>;
  // 32 ranks on 4 nodes of 8: TP-like groups of 2, 4, 8; whole nodes 16, 32; DP-like 2, 4 ranks one per node.
  CHECK(group_placements(32, 8) == Placements{{2, 2}, {4, 4}, {8, 8}, {16, 8}, {2, 1}, {32, 8}, {4, 1}});
  CHECK(group_placements(8, 0) == Placements{{2, 2}, {4, 4}, {8, 8}});  // one node
  CHECK(group_placements(4, 1) == Placements{{2, 1}, {4, 1}});          // a rank per node
  SuiteOptions two_nodes = options(BackendKind::cpu, true, 4);
  two_nodes.ranks_per_node = 2;
  std::set<std::vector<std::int64_t>> sends;
  for (const BenchCase& c : bench_cases(two_nodes)) {
    if (c.op == OpClass::send) sends.insert({c.shape[1], c.shape[2]});
  }
  CHECK(sends == std::set<std::vector<std::int64_t>>{{2, 2}, {2, 1}});  // a pair inside a node and across two
}

}  // namespace
}  // namespace weft
