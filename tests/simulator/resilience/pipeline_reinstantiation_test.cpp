#include "simulator/resilience/pipeline_reinstantiation.hpp"

#include <catch2/catch.hpp>

namespace weft {
namespace {

using Rule = ReinstantiationStep;

TEST_CASE("a pipeline that keeps n0 nodes is reinstantiated from a smaller template", "[resilience][oobleck]") {
  // Fig. 2.8a: a 4-node pipeline loses a node and becomes a 3-node pipeline.
  const auto out = reinstantiate({4, 2}, {1, 0}, 2, 1);
  CHECK(out.pipelines == std::vector<int>{3, 2});
  CHECK(out.steps == std::vector<Rule>{Rule::simple});
  CHECK(out.feasible);
}

TEST_CASE("a pipeline left with too few nodes borrows from one that can spare them", "[resilience][oobleck]") {
  // Fig. 2.8b: a 2-node pipeline (n0 = 2) loses a node and borrows one from the 3-node pipeline.
  const auto out = reinstantiate({2, 3}, {1, 0}, 2, 1);
  CHECK(out.pipelines == std::vector<int>{2, 2});
  CHECK(out.steps == std::vector<Rule>{Rule::borrowed});
  CHECK(out.feasible);
  // Each node comes from the pipeline with the most nodes then: 5, then the first of the two 4s.
  CHECK(reinstantiate({3, 4, 5}, {2, 0, 0}, 3, 1).pipelines == std::vector<int>{3, 3, 4});
  // Too few to spare (one node above n0 = 3, two needed): it merges instead.
  CHECK(reinstantiate({3, 3, 4}, {2, 0, 0}, 3, 1).steps == std::vector<Rule>{Rule::merged});
}

TEST_CASE("a pipeline that cannot borrow merges with another", "[resilience][oobleck]") {
  // Fig. 2.8c: every pipeline has n0 = 2 nodes; the one that lost a node merges with another.
  const auto out = reinstantiate({2, 2, 2}, {1, 0, 0}, 2, 1);
  CHECK(out.pipelines == std::vector<int>{3, 2});
  CHECK(out.steps == std::vector<Rule>{Rule::merged});
  CHECK(out.feasible);
  // Appendix A.2: losing k nodes of an n0 pipeline and merging with an n0 pipeline gives 2 n0 − k.
  CHECK(reinstantiate({4, 4, 4}, {3, 0, 0}, 4, 1).pipelines == std::vector<int>{5, 4});
}

TEST_CASE("Oobleck stops when fewer than f + 1 pipelines are left", "[resilience][oobleck]") {
  // Two 2-node pipelines, f = 1: after a failure the merged pipeline is the only one.
  const auto merged = reinstantiate({2, 2}, {1, 0}, 2, 1);
  CHECK(merged.pipelines == std::vector<int>{3});
  CHECK_FALSE(merged.feasible);
  // A pipeline that loses every node is gone.
  const auto gone = reinstantiate({2, 2, 2}, {2, 0, 0}, 2, 1);
  CHECK(gone.pipelines == std::vector<int>{2, 2});
  CHECK(gone.feasible);
  CHECK_FALSE(reinstantiate({2, 2, 2}, {2, 0, 0}, 2, 2).feasible);
}

}  // namespace
}  // namespace weft
