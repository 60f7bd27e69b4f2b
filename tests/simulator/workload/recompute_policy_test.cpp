#include "simulator/workload/recompute_policy.hpp"

#include <catch2/catch.hpp>

namespace weft {
namespace {

TEST_CASE("describe names the layers recompute_layers picks", "[workload][recompute]") {
  CHECK(describe(LayerRecompute{}) == "every layer");
  CHECK(describe({.method = LayerRecompute::Method::first, .count = 1}) == "the first layer of each chunk");
  CHECK(describe({.method = LayerRecompute::Method::first, .count = 4}) == "the first 4 layers of each chunk");
  CHECK(describe({.method = LayerRecompute::Method::every, .count = 1}) == "every layer");
  CHECK(describe({.method = LayerRecompute::Method::every, .count = 2}) == "every 2nd layer of each rank");
  CHECK(describe({.method = LayerRecompute::Method::every, .count = 3}) == "every 3rd layer of each rank");
  CHECK(describe({.method = LayerRecompute::Method::every, .count = 12}) == "every 12th layer of each rank");
  CHECK(describe({.method = LayerRecompute::Method::every, .count = 21}) == "every 21st layer of each rank");
  CHECK(describe({.method = LayerRecompute::Method::uniform, .count = 1}) == "every layer");
  CHECK(describe({.method = LayerRecompute::Method::uniform, .count = 4}) ==
        "every layer, in groups of 4 of each chunk");
}

TEST_CASE("a recompute choice's name reads back to it, and nothing else reads", "[workload][recompute]") {
  using Method = LayerRecompute::Method;
  for (const RecomputeChoice& choice :
       {RecomputeChoice{.policy = RecomputePolicy::none, .layers = {}},
        RecomputeChoice{.policy = RecomputePolicy::selective, .layers = {}},
        RecomputeChoice{.policy = RecomputePolicy::full, .layers = {}},
        RecomputeChoice{.policy = RecomputePolicy::full, .layers = {.method = Method::first, .count = 4}},
        RecomputeChoice{.policy = RecomputePolicy::full, .layers = {.method = Method::every, .count = 2}},
        RecomputeChoice{.policy = RecomputePolicy::full, .layers = {.method = Method::uniform, .count = 3}}}) {
    INFO(recompute_name(choice));
    CHECK(parse_recompute_choice(recompute_name(choice)) == choice);
  }
  CHECK(recompute_name({.policy = RecomputePolicy::full, .layers = {.method = Method::first, .count = 4}}) ==
        "full/first4");
  for (const char* bad :
       {"", "all", "full/", "full/first", "full/first0", "full/first-1", "full/first2x", "full/every100001",
        "selective/first2", "none/every2", "full/last2", "full/uniform0", "none/uniform2"}) {
    INFO(bad);
    CHECK_FALSE(parse_recompute_choice(bad).has_value());
  }
}

}  // namespace
}  // namespace weft
