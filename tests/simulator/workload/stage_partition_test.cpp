// Balanced parameter partitioning of concatenated modules, against exhaustive search.
#include "simulator/workload/stage_partition.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <catch2/catch.hpp>
#include <functional>
#include <numeric>
#include <random>

namespace weft {
namespace {

std::int64_t heaviest(std::span<const std::int64_t> weights, const std::vector<int>& layers) {
  std::int64_t worst = 0;
  std::size_t next = 0;
  for (int count : layers) {
    std::int64_t load = 0;
    for (int i = 0; i < count; ++i) load += weights[next++];
    worst = std::max(worst, load);
  }
  return worst;
}

// The best heaviest stage over every split of the layers into `groups` non-empty runs.
std::int64_t exhaustive_best(std::span<const std::int64_t> weights, int groups) {
  std::int64_t best = std::numeric_limits<std::int64_t>::max();
  std::vector<int> layers;
  const std::function<void(std::size_t)> split = [&](std::size_t used) {
    const int left = groups - static_cast<int>(layers.size());
    const auto remaining = static_cast<int>(weights.size() - used);
    if (left == 1) {
      layers.push_back(remaining);
      best = std::min(best, heaviest(weights, layers));
      layers.pop_back();
      return;
    }
    for (int count = 1; count <= remaining - (left - 1); ++count) {
      layers.push_back(count);
      split(used + static_cast<std::size_t>(count));
      layers.pop_back();
    }
  };
  split(0);
  return best;
}

TEST_CASE("partitioning by parameters finds the exhaustive search's heaviest stage", "[workload][partition]") {
  std::mt19937_64 random(7);
  for (int trial = 0; trial < 500; ++trial) {
    const int layers = 1 + static_cast<int>(random() % 10);
    const int groups = 1 + static_cast<int>(random() % static_cast<std::uint64_t>(layers));
    std::vector<std::int64_t> weights;
    for (int i = 0; i < layers; ++i) weights.push_back(1 + static_cast<std::int64_t>(random() % 100));
    INFO("trial " << trial << ": " << layers << " layers in " << groups << " stages");
    const std::vector<int> split = partition_balanced(weights, groups);
    REQUIRE(static_cast<int>(split.size()) == groups);
    CHECK(std::all_of(split.begin(), split.end(), [](int count) { return count >= 1; }));
    CHECK(std::accumulate(split.begin(), split.end(), 0) == layers);
    CHECK(heaviest(weights, split) == exhaustive_best(weights, groups));
  }
}

TEST_CASE("the layers' parameters add up to the model's", "[workload][partition]") {
  for (const char* name : {"\"llama3-8b\"", "\"vlm-s\"", "\"t2v-s\""}) {
    INFO(name);
    const JsonDocument document = JsonDocument::parse_text(name, "model.json");
    const MultimodalModel model(load_multimodal_spec(document.root()));
    const std::vector<std::int64_t> parameters = pipeline_layer_parameters(model);
    CHECK(static_cast<int>(parameters.size()) == model.layer_count());
    CHECK(std::accumulate(parameters.begin(), parameters.end(), std::int64_t{0}) == model.parameter_count());
  }
}

TEST_CASE("a layer's time is its forward, plus its gradients where the frozen rule keeps them",
          "[workload][partition]") {
  const JsonDocument cluster_json = JsonDocument::parse_text(R"({"base": "dgx-h100", "gpus": 8})", "cluster.json");
  const ClusterCostModel cost(load_cluster_spec(cluster_json.root()));
  ShardContext base;
  base.tp = 2;
  const SampleShape sample{512, 4, 0.0};
  auto vlm = [](bool vision_frozen) {
    const JsonDocument document = JsonDocument::parse_text(fmt::format(R"({{"name": "vlm", "modules": [
              {{"name": "vision", "model": "vit-5b", "tokens": "images", "tokens_per_image": 64, "frozen": {}}},
              {{"name": "projector", "projector": {{}}}},
              {{"name": "language", "model": "llama3-8b"}}]}})",
                                                                       vision_frozen),
                                                           "model.json");
    return MultimodalModel(load_multimodal_spec(document.root()));
  };
  // Independently: the vision layer's own steps, timed op by op.
  const JsonDocument vit = JsonDocument::parse_text(R"("vit-5b")", "model.json");
  ShardContext images = base;
  images.micro_batch = 4;
  images.seq_len = 64;
  auto time = [&](const std::optional<OpWork>& work) {
    return work && category_of(work->op_class) != OpCategory::communication ? cost.duration(*work, cost.cluster().gpu)
                                                                            : TimeNs{0};
  };
  std::int64_t forward = 0, all = 0;
  for (const Step& step : Model(load_model_spec(vit.root())).layer_steps(images, 5)) {
    forward += time(step.forward);
    all += time(step.forward) + time(step.backward) + time(step.weight_grad);
  }
  CHECK(pipeline_layer_times(vlm(true), base, sample, cost)[5] == forward);
  CHECK(pipeline_layer_times(vlm(false), base, sample, cost)[5] == all);
  CHECK(all > 2 * forward);
}

}  // namespace
}  // namespace weft
