#pragma once

#include <string>

#include "simulator/core/json_cursor.hpp"
#include "simulator/workload/training_scenario.hpp"

namespace weft::test {

// A small VLM for the planner's tests: a 4-layer ViT (169 tokens per image), an MLP projector and
// a 4-layer Llama, on 4 H800 as TP2 PP2, with `data` (a scenario's "data" section) or, if empty,
// every sample 6 images and 2048 tokens.
inline std::string small_vlm_scenario(const std::string& data, const std::string& parallel_extra = "",
                                      bool frozen_vision = false, std::int64_t global_batch = 16) {
  return R"({"model": {"name": "small-vlm", "modules": [
              {"name": "vision", "model": {"base": "vit-5b", "layers": 4}, "tokens": "images",
               "tokens_per_image": 169, "frozen": )" +
         std::string(frozen_vision ? "true" : "false") + R"(},
              {"name": "projector", "projector": {"ffn_hidden": 4096}},
              {"name": "language", "model": {"base": "llama3-8b", "layers": 4}}]},
            "cluster": {"base": "h800-testbed", "gpus": 4},
            "parallel": {"tp": 2, "pp": 2, "stage_layers": "parameters")" +
         parallel_extra + R"(},
            "training": {"global_batch": )" +
         std::to_string(global_batch) + R"(, "seq_len": 2048)" + (data.empty() ? R"(, "images": 6)" : "") +
         R"(},
            "options": {"framework_overhead_GiB": 3})" +
         (data.empty() ? "" : R"(, "data": )" + data) + "}";
}

// small_vlm_scenario's text on 8 GPUs: TP2 PP2 and two DP replicas.
inline std::string with_two_replicas(std::string text) {
  const std::string four = R"("gpus": 4)";
  return text.replace(text.find(four), four.size(), R"("gpus": 8)");
}

inline TrainingScenario load_scenario_text(const std::string& text) {
  const JsonDocument document = JsonDocument::parse_text(text, "scenario.json");
  return load_training_scenario(document.root());
}

inline const std::string kImageTextData = R"({"dataset": "image-text-mix", "seed": 3, "pack": true})";

}  // namespace weft::test
