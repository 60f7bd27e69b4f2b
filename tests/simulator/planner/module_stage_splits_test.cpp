#include "simulator/planner/module_stage_splits.hpp"

#include <catch2/catch.hpp>

#include "tests/simulator/workload/multimodal_test_support.hpp"

namespace weft {
namespace {

MultimodalSpec spec_of(const std::string& text) {
  const JsonDocument document = JsonDocument::parse_text(text, "model.json");
  return load_multimodal_spec(document.root());
}

TEST_CASE("the splits of a plan's stages over the modules are every count within the layers, found by brute force",
          "[sweep][modality]") {
  const MultimodalSpec model = spec_of(test::kTwoEncoderModel);
  REQUIRE(model.modules.size() == 5);
  for (int pp = 1; pp <= 11; ++pp) {
    // Every (vision, audio, language) stage count from 0 to 9, kept where each is 1 .. its layers
    // and they add up to pp; in lexicographic order, as the loops run.
    std::vector<std::vector<int>> expected;
    for (int v = 0; v <= 9; ++v) {
      for (int a = 0; a <= 9; ++a) {
        for (int l = 0; l <= 9; ++l) {
          if (v >= 1 && v <= 3 && a >= 1 && a <= 2 && l >= 1 && l <= 4 && v + a + l == pp) {
            expected.push_back({v, 0, a, 0, l});
          }
        }
      }
    }
    INFO("pp " << pp);
    CHECK(module_stage_splits(model, pp) == expected);
  }
  CHECK(module_stage_splits(model, 9) == std::vector<std::vector<int>>{{3, 0, 2, 0, 4}});
  CHECK(module_stage_splits(model, 2).empty());   // three modules need three stages
  CHECK(module_stage_splits(model, 10).empty());  // nine layers hold at most nine stages
}

TEST_CASE("the most balanced split has the lightest busiest stage, computed by hand", "[sweep][modality]") {
  const MultimodalSpec model = spec_of(test::vlm_model(false, false));  // vision 4 layers, language 4
  // Vision layers weigh 1, language layers 3.
  const std::vector<std::int64_t> weights{1, 1, 1, 1, 3, 3, 3, 3};
  // vision:1 language:3 -> stages 4 | 3+3, 3, 3 (4 layers over 3: 2, 1, 1) -> busiest 6.
  CHECK(busiest_stage_weight(weights, model, std::vector<int>{1, 0, 3}) == 6);
  // vision:2 language:2 -> 2, 2 | 6, 6 -> 6.
  CHECK(busiest_stage_weight(weights, model, std::vector<int>{2, 0, 2}) == 6);
  // vision:3 language:1 -> 2, 1, 1 | 12 -> 12.
  CHECK(busiest_stage_weight(weights, model, std::vector<int>{3, 0, 1}) == 12);
  const std::vector<std::vector<int>> splits = module_stage_splits(model, 4);
  REQUIRE(splits == std::vector<std::vector<int>>{{1, 0, 3}, {2, 0, 2}, {3, 0, 1}});
  // 1+3 and 2+2 tie at 6: the first wins.
  CHECK(most_balanced_split(splits, weights, model) == std::vector<int>{1, 0, 3});
  // Heavier vision layers (4 each): 1+3 -> 16; 2+2 -> 8 and 6; 3+1 -> 8 and 12. 2+2 wins.
  const std::vector<std::int64_t> heavy_vision{4, 4, 4, 4, 3, 3, 3, 3};
  CHECK(most_balanced_split(splits, heavy_vision, model) == std::vector<int>{2, 0, 2});
}

}  // namespace
}  // namespace weft
