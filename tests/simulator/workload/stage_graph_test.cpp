// Which virtual pipeline stages read which: Megatron's chain and modality parallelism's tree.
#include "simulator/workload/stage_graph.hpp"

#include <catch2/catch.hpp>

#include "simulator/core/json_cursor.hpp"

namespace weft {
namespace {

using Catch::Matchers::Equals;

MultimodalSpec valm_s() {
  const JsonDocument document = JsonDocument::parse_text(R"("valm-s")", "model.json");
  return load_multimodal_spec(JsonCursor(document.root().json(), "model"));
}

TEST_CASE("a chain of virtual stages: each reads the one before", "[workload][stage_graph]") {
  // pp 2, vpp 2: virtual stages 0..3 on ranks 0, 1, 0, 1.
  const StageGraph graph = StageGraph::chain(4, 2);
  REQUIRE(graph.groups() == 4);
  CHECK(graph.inputs(0).empty());
  CHECK_THAT(graph.inputs(3), Equals(std::vector<int>{2}));
  CHECK(graph.successor(0) == 1);
  CHECK(graph.successor(3) == -1);
  CHECK(graph.schedule_position(2) == 0);
  CHECK(graph.schedule_position(3) == 1);
}

TEST_CASE("modality stages: encoders side by side into the module reading them", "[workload][stage_graph]") {
  // VALM-S lists vision, its projector, audio, its projector, language; give vision 2 stages,
  // audio 1 and language 2: stages 0-1 vision, 2 audio, 3-4 language.
  const MultimodalSpec model = valm_s();
  const std::vector<int> stages = {2, 0, 1, 0, 2};
  const StageGraph graph = StageGraph::modality(model, stages);
  REQUIRE(graph.groups() == 5);
  CHECK(graph.inputs(0).empty());
  CHECK_THAT(graph.inputs(1), Equals(std::vector<int>{0}));
  CHECK(graph.inputs(2).empty());  // audio reads the sample's data, not the vision stages
  // The language model lists the vision projector first (on stage 1), then the audio's (stage 2).
  CHECK_THAT(graph.inputs(3), Equals(std::vector<int>{1, 2}));
  CHECK_THAT(graph.inputs(4), Equals(std::vector<int>{3}));
  CHECK(graph.successor(0) == 1);
  CHECK(graph.successor(1) == 3);
  CHECK(graph.successor(2) == 3);
  CHECK(graph.successor(4) == -1);
  // 1F1B warm-up counts the stages on the path to the loss: vision's first stage has 3 after
  // it, like stage 1 of a 5-stage pipeline; the audio stage has 2, like stage 2.
  CHECK(graph.schedule_position(0) == 1);
  CHECK(graph.schedule_position(1) == 2);
  CHECK(graph.schedule_position(2) == 2);
  CHECK(graph.schedule_position(3) == 3);
  CHECK(graph.schedule_position(4) == 4);
}

}  // namespace
}  // namespace weft
