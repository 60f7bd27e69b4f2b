// The batch's stage flows (papers/001 §5, Fig. 6a) built by hand for a small VLM: which stages
// exist, on which ranks, what they wait for, what they free, and what they cost.
#include "simulator/planner/dip/stage_flows.hpp"

#include <catch2/catch.hpp>

#include <algorithm>

#include "tests/simulator/planner/dip/dip_test_support.hpp"

namespace weft::dip {
namespace {

struct Fixture {
  TrainingScenario scenario = test::load_scenario_text(test::small_vlm_scenario(""));
  MultimodalModel model{scenario.model};
  LayerCosts costs{model, scenario.shard_context(), scenario.cluster, false};
  std::vector<LayerPolicy> keep = std::vector<LayerPolicy>(8, LayerPolicy::keep);
};

ModuleSegments segments(std::size_t module, int first, int sub, std::vector<int> chunks, bool backward = true) {
  ModuleSegments m;
  m.module = module;
  m.first_layer = first;
  m.layers = 4;
  m.sub_microbatch = sub;
  m.segments = static_cast<int>(chunks.size()) / 2;
  m.chunk_layers = std::move(chunks);
  m.backward = backward;
  return m;
}

std::size_t find_stage(const StageFlows& flows, int mb, std::size_t module, int sub, int chunk, bool backward) {
  for (std::size_t i = 0; i < flows.stages.size(); ++i) {
    const StageWork& w = flows.work[i];
    if (w.microbatch == mb && w.module == module && w.sub_microbatch == sub && w.chunk == chunk &&
        flows.stages[i].backward == backward)
      return i;
  }
  FAIL("no such stage");
  return 0;
}

TEST_CASE("DIP flows: sub-microbatches through segments, modules joined, backward in reverse", "[dip][flows]") {
  Fixture f;
  // Vision: sub-microbatches of 2 images, one segment (2 chunks of 2 layers); language: two
  // segments (4 chunks of 1 layer). Microbatch 0 holds 3 images, microbatch 1 none.
  const std::vector<ModuleSegments> modules = {segments(0, 0, 2, {2, 2}), segments(2, 4, 0, {1, 1, 1, 1})};
  const std::vector<SampleShape> shapes = {{2048, 3, 0.0, 0.0}, {2048, 0, 0.0, 0.0}};
  const StageFlows flows = build_dip_flows(modules, shapes, 2, f.costs, f.keep);
  // mb 0: vision 2 sub-microbatches x 2 chunks, language 4 chunks; mb 1: language only; x2 for
  // backward stages.
  CHECK(flows.stages.size() == 2 * (2 * 2 + 4 + 4));
  CHECK(flows.follows == std::vector<std::vector<int>>{{}, {0}, {}});
  CHECK(flows.group_microbatch == std::vector<int>{0, 0, 1});

  // Sub-microbatch sizes 2 and 1; chunk c runs on rank c mod 2.
  const std::size_t v00 = find_stage(flows, 0, 0, 0, 0, false);
  const std::size_t v01 = find_stage(flows, 0, 0, 0, 1, false);
  const std::size_t v11 = find_stage(flows, 0, 0, 1, 1, false);
  CHECK(flows.work[v00].shape.images == 2);
  CHECK(flows.work[v11].shape.images == 1);
  CHECK(flows.stages[v01].rank == 1);
  CHECK(flows.stages[v01].predecessors == std::vector<std::size_t>{v00});
  // The forward stage costs its layers' forwards; it holds what they keep.
  const SampleShape two_images{0, 2, 0.0, 0.0};
  CHECK(flows.stages[v00].duration == f.costs.at(0, two_images).forward + f.costs.at(1, two_images).forward);
  CHECK(flows.stages[v00].memory == f.costs.at(0, two_images).saved + f.costs.at(1, two_images).saved);

  // The language model starts once both image sub-microbatches have left the vision module.
  const std::size_t l0 = find_stage(flows, 0, 2, 0, 0, false);
  CHECK(flows.stages[l0].predecessors == std::vector<std::size_t>{v01, v11});
  CHECK(flows.work[l0].first_layer == 4);
  CHECK(find_stage(flows, 1, 2, 0, 0, false) > 0);
  CHECK(flows.stages[find_stage(flows, 1, 2, 0, 0, false)].predecessors.empty());  // no images in mb 1

  // Backward: the language model's from its last chunk (after its forward), the vision's after
  // the language model's first chunk; each frees its own forward stage.
  const std::size_t l3 = find_stage(flows, 0, 2, 0, 3, false);
  const std::size_t b_l3 = find_stage(flows, 0, 2, 0, 3, true);
  const std::size_t b_l0 = find_stage(flows, 0, 2, 0, 0, true);
  CHECK(flows.stages[b_l3].predecessors == std::vector<std::size_t>{l3});
  CHECK(flows.stages[b_l3].frees == l3);
  const std::size_t b_v01 = find_stage(flows, 0, 0, 0, 1, true);
  CHECK(flows.stages[b_v01].predecessors == std::vector<std::size_t>{v01, b_l0});
  CHECK(flows.stages[b_v01].rank == 1);
  CHECK(flows.stages[b_v01].duration == f.costs.at(2, two_images).backward + f.costs.at(3, two_images).backward);
  CHECK(flows.busy() > 0);
}

TEST_CASE("a frozen module without backward passes holds nothing", "[dip][flows]") {
  Fixture f;
  const std::vector<ModuleSegments> modules = {segments(0, 0, 4, {2, 2}, false), segments(2, 4, 0, {2, 2})};
  const std::vector<SampleShape> shapes = {{2048, 4, 0.0, 0.0}};
  const StageFlows flows = build_dip_flows(modules, shapes, 2, f.costs, f.keep);
  CHECK(flows.stages.size() == 2 + 2 * 2);
  for (std::size_t i = 0; i < flows.stages.size(); ++i) {
    if (flows.work[i].module == 0) {
      CHECK_FALSE(flows.stages[i].backward);
      CHECK(flows.stages[i].memory == 0);
    }
  }
  // The language model's last backward stage waits for nothing of the vision module.
  CHECK(flows.stages[find_stage(flows, 0, 2, 0, 0, true)].predecessors.size() == 1);
}

TEST_CASE("Megatron flows under modality stages: encoders side by side, backward from the join", "[dip][flows]") {
  Fixture f;
  // The tree of VALM-S with one stage per module: virtual stages 0 and 1 both feed stage 2. The
  // fixture's layers stand in for the modules' (the flows' links come from the graph alone).
  const JsonDocument document = JsonDocument::parse_text(R"("valm-s")", "model.json");
  const MultimodalSpec valm = load_multimodal_spec(JsonCursor(document.root().json(), "model"));
  const std::vector<int> module_stages = {1, 0, 1, 0, 1};
  const StageGraph graph = StageGraph::modality(valm, module_stages);
  const std::vector<int> stage_layers = {3, 2, 3};
  const std::vector<SampleShape> shapes(2, SampleShape{2048, 6, 0.0, 0.0});
  const StageFlows flows = build_megatron_flows(stage_layers, graph, shapes, 3, f.costs, f.keep);
  REQUIRE(flows.stages.size() == 2 * 3 * 2);
  // Microbatch 1: forward stages 6, 7, 8 (virtual stages 0, 1, 2), backward 9, 10, 11 (2, 1, 0).
  CHECK(flows.stages[6].predecessors.empty());
  CHECK(flows.stages[7].predecessors.empty());
  CHECK(flows.stages[8].predecessors == std::vector<std::size_t>{6, 7});
  CHECK(flows.stages[9].predecessors == std::vector<std::size_t>{8});
  CHECK(flows.stages[10].predecessors == std::vector<std::size_t>{9});
  CHECK(flows.stages[11].predecessors == std::vector<std::size_t>{9});
  CHECK(flows.stages[11].frees == 6);
  CHECK(flows.stages[11].rank == 0);
}

TEST_CASE("Megatron flows: whole microbatches through virtual stages of mixed modules", "[dip][flows]") {
  Fixture f;
  const std::vector<int> stage_layers = {3, 2, 2, 1};  // virtual stages 0..3 on ranks 0, 1, 0, 1
  const std::vector<SampleShape> shapes(3, SampleShape{2048, 6, 0.0, 0.0});
  const StageFlows flows = build_megatron_flows(
      stage_layers, StageGraph::chain(static_cast<int>(stage_layers.size()), 2), shapes, 2, f.costs, f.keep);
  REQUIRE(flows.stages.size() == 3 * 4 * 2);
  // Microbatch 1's forward of virtual stage 2 (layers 5-6, language) and its backward.
  const std::size_t forward = 8 + 2;
  const std::size_t backward = 8 + 4 + (3 - 2);
  CHECK(flows.stages[forward].rank == 0);
  CHECK(flows.work[forward].first_layer == 5);
  CHECK(flows.work[forward].end_layer == 7);
  CHECK(flows.work[forward].module == 2);
  CHECK(flows.stages[backward].frees == forward);
  CHECK(flows.stages[backward].predecessors == std::vector<std::size_t>{backward - 1});
  // Virtual stage 1 mixes the vision's last layer (with the projector) and the language's first.
  CHECK(flows.work[1].module == 0);
  const SampleShape text{2048, 0, 0.0, 0.0};
  const SampleShape images{0, 6, 0.0, 0.0};
  CHECK(flows.stages[1].duration == f.costs.at(3, images).forward + f.costs.at(4, text).forward);
  CHECK(flows.follows.size() == 3);
}

TEST_CASE("stage priorities: forwards by group, backwards by their microbatch's last group", "[dip][flows]") {
  Fixture f;
  const std::vector<ModuleSegments> modules = {segments(0, 0, 0, {2, 2}), segments(2, 4, 0, {2, 2})};
  const std::vector<SampleShape> shapes(2, SampleShape{2048, 2, 0.0, 0.0});
  const StageFlows flows = build_dip_flows(modules, shapes, 2, f.costs, f.keep);
  CHECK(default_group_priorities(flows) == std::vector<int>{4, 3, 2, 1});
  // Groups: (mb 0, vision), (mb 0, language), (mb 1, vision), (mb 1, language). Rank microbatch 1
  // first: its vision 4, its language 3; microbatch 0: 2, 1.
  const std::vector<int> groups = {2, 1, 4, 3};
  const std::vector<int> priority = stage_priorities(flows, groups);
  const int modules_in_spec = 3;
  CHECK(priority[find_stage(flows, 0, 0, 0, 0, false)] == 2);
  CHECK(priority[find_stage(flows, 1, 2, 0, 1, false)] == 3);
  // Backward: microbatch 1 (its language group has 3) before microbatch 0 (1), language before
  // vision within each.
  CHECK(priority[find_stage(flows, 1, 2, 0, 0, true)] == 3 * modules_in_spec + 2);
  CHECK(priority[find_stage(flows, 1, 0, 0, 0, true)] == 3 * modules_in_spec + 0);
  CHECK(priority[find_stage(flows, 0, 2, 0, 0, true)] == 1 * modules_in_spec + 2);
  // The interleaver runs every stage, each after its predecessors.
  const StageSchedule schedule = interleave_stages(flows.stages, 2, 0, priority);
  for (std::size_t i = 0; i < flows.stages.size(); ++i) {
    for (std::size_t p : flows.stages[i].predecessors) CHECK(schedule.end[p] <= schedule.start[i]);
  }
}

}  // namespace
}  // namespace weft::dip
