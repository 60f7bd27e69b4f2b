#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "simulator/graph/graph.hpp"
#include "tests/simulator/workload/training_test_support.hpp"

namespace weft::test {

// A small VLM: 4 vision layers of hidden 256 on images of 16 tokens, a projector through 512 to
// hidden 512, 4 language layers.
constexpr std::int64_t kImageTokens = 16;
constexpr std::int64_t kVisionHidden = 256, kProjectorFfn = 512, kLanguageHidden = 512;
inline const std::string kVisionSpec =
    R"({"base": "vit-5b", "layers": 4, "hidden": 256, "ffn_hidden": 1024, "heads": 4, "patch_input": 48})";
inline const std::string kLanguageSpec =
    R"({"base": "llama3-8b", "layers": 4, "hidden": 512, "ffn_hidden": 1024, "heads": 8, "kv_heads": 4,
        "vocab": 1000})";

inline std::string vlm_model(bool vision_frozen, bool language_frozen) {
  return fmt::format(
      R"({{"name": "vlm", "modules": [
            {{"name": "vision", "model": {}, "tokens": "images", "tokens_per_image": {}, "frozen": {}}},
            {{"name": "projector", "projector": {{"ffn_hidden": {}}}}},
            {{"name": "language", "model": {}, "frozen": {}}}]}})",
      kVisionSpec, kImageTokens, vision_frozen, kProjectorFfn, kLanguageSpec, language_frozen);
}

// Two encoders, vision (3 layers) and audio (2 layers, 25 tokens per second), each with a
// projector, both read by a language model of 4 layers; every module trained.
inline const std::string kTwoEncoderModel = R"({"name": "valm", "modules": [
    {"name": "vision", "model": {"base": "vit-5b", "layers": 3, "hidden": 256, "ffn_hidden": 1024, "heads": 4,
                                 "patch_input": 48}, "tokens": "images", "tokens_per_image": 16},
    {"name": "vision-projector", "projector": {"ffn_hidden": 512}},
    {"name": "audio", "model": {"base": "whisper-large-v3-encoder", "layers": 2, "hidden": 256, "ffn_hidden": 1024,
                                "heads": 4}, "tokens": "audio", "tokens_per_second": 25, "inputs": []},
    {"name": "audio-projector", "projector": {"ffn_hidden": 512}},
    {"name": "language", "model": {"base": "llama3-8b", "layers": 4, "hidden": 512, "ffn_hidden": 1024,
                                   "heads": 8, "kv_heads": 4, "vocab": 1000},
     "inputs": ["vision-projector", "audio-projector"]}]})";

inline std::string scenario_text(const std::string& model, const std::string& parallel, const std::string& training) {
  return fmt::format(R"({{"model": {}, "cluster": {{"base": "dgx-h100", "gpus": 8}}, "parallel": {},
                         "training": {}}})",
                     model, parallel, training);
}

// Ops of the expanded graph whose names contain every one of `parts`.
inline std::size_t ops_named(const Graph& graph, std::initializer_list<std::string_view> parts) {
  std::size_t count = 0;
  for (std::uint32_t i = 0; i < graph.op_count(); ++i) {
    const std::string_view name = graph.op_name(OpId(i));
    bool all = true;
    for (std::string_view part : parts) all = all && name.find(part) != std::string_view::npos;
    count += all ? 1 : 0;
  }
  return count;
}

}  // namespace weft::test
