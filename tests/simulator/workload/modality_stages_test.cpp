// Modality parallelism (papers/004 §4.1): encoders on pipeline stages of their own, side by side,
// feeding the module that reads them; how a scenario gives it and what it refuses.
#include "simulator/workload/modality_stages.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include "simulator/workload/training_scenario.hpp"
#include "tests/simulator/workload/multimodal_test_support.hpp"

namespace weft {
namespace {

using Catch::Matchers::Contains;
using test::kImageTokens;
using test::kLanguageSpec;
using test::kVisionSpec;
using test::ops_named;
using test::run_training;
using test::scenario_from;
using test::scenario_text;
using test::TrainingRun;

// A small vision-audio-language model: vision (4 layers) and its projector, audio (2 layers,
// 50 tokens per second) and its projector, both read by the language model (4 layers).
std::string valm_model(bool projectors_frozen = false, bool audio_projector_frozen = false) {
  return fmt::format(
      R"({{"name": "valm", "modules": [
            {{"name": "vision", "model": {}, "tokens": "images", "tokens_per_image": {}, "frozen": true}},
            {{"name": "vision-projector", "projector": {{}}, "frozen": {}}},
            {{"name": "audio", "model": {{"base": "whisper-large-v3-encoder", "layers": 2, "hidden": 256,
              "ffn_hidden": 1024, "heads": 4}}, "tokens": "audio", "tokens_per_second": 50, "inputs": [],
              "frozen": true}},
            {{"name": "audio-projector", "projector": {{}}, "frozen": {}}},
            {{"name": "language", "model": {}, "inputs": ["vision-projector", "audio-projector"],
              "frozen": true}}]}})",
      kVisionSpec, kImageTokens, projectors_frozen, audio_projector_frozen, kLanguageSpec);
}

const std::string kValmTraining = R"({"global_batch": 8, "seq_len": 256, "images": 2, "audio_seconds": 2})";
// Vision on stage 0, audio on stage 1, language on stages 2 and 3.
const std::string kValmModality =
    R"({"tp": 2, "pp": 4, "dp": 1, "modality_stages": {"vision": 1, "audio": 1, "language": 2}})";

TrainingScenario valm_scenario(const std::string& parallel = kValmModality, const std::string& model = valm_model()) {
  return scenario_from(scenario_text(model, parallel, kValmTraining));
}

// The ideal network makes transfers and TP collectives free, so that pipeline passes follow
// one another without gaps a hand recurrence would have to model.
TrainingScenario with_ideal_network(std::string text) {
  text.insert(text.rfind('}'), R"(, "options": {"ideal_network": true})");
  return scenario_from(text);
}

const PassOp& pass_of(const TrainingRun& run, int position, PassKind kind, int microbatch) {
  const auto& passes = run.workload.passes;
  const auto it = std::find_if(passes.begin(), passes.end(), [&](const PassOp& p) {
    return p.stage == position && p.action.kind == kind && p.action.microbatch == microbatch && !p.recompute;
  });
  REQUIRE(it != passes.end());
  return *it;
}

TEST_CASE("modality stages: each module's layers on stages of its own, balanced within it", "[workload][modality]") {
  const TrainingScenario scenario = valm_scenario();
  CHECK(scenario.parallel.modality_stages == std::vector<int>{1, 0, 1, 0, 2});
  // Each encoder whole on its stage (with its projector); the language model's 4 layers
  // balanced by parameters over two. A layer holds 2.36 M parameters (attention 0.79 M with
  // 4 KV heads of 64, SwiGLU 1.57 M); the embedding and the untied head (0.51 M each) weigh
  // the same on both ends, so 2 and 2 (5.2 M each) beat 3 and 1 (7.6 M and 2.9 M).
  CHECK(scenario.parallel.stage_layers == std::vector<int>{4, 2, 2, 2});
  CHECK(named_modality_stages(scenario.model, scenario.parallel.modality_stages) ==
        std::vector<std::pair<std::string, int>>{{"vision", 1}, {"audio", 1}, {"language", 2}});
  const std::vector<std::int64_t> weights = {5, 1, 1, 1, 2, 2, 9, 1, 1, 1};
  const std::vector<int> stages = {2, 0, 1, 0, 2};  // over 4 + 2 + 4 layers
  CHECK(partition_within_modules(weights, scenario.model, stages) == std::vector<int>{1, 3, 2, 1, 3});
}

TEST_CASE("modality stages: encoders run side by side, and the module reading them waits for both",
          "[workload][modality]") {
  const TrainingScenario scenario = with_ideal_network(scenario_text(valm_model(), kValmModality, kValmTraining));
  const TrainingRun run = run_training(scenario);
  // Both encoders start the first microbatch at once, on their own GPUs.
  CHECK(run.result.start(pass_of(run, 0, PassKind::forward, 0).op) == 0);
  CHECK(run.result.start(pass_of(run, 1, PassKind::forward, 0).op) == 0);
  for (int mb = 0; mb < 8; ++mb) {
    const TimeNs vision = run.result.end(pass_of(run, 0, PassKind::forward, mb).op);
    const TimeNs audio = run.result.end(pass_of(run, 1, PassKind::forward, mb).op);
    CHECK(run.result.start(pass_of(run, 2, PassKind::forward, mb).op) >= std::max(vision, audio));
    // Gradients go back to both projectors once the language model's first stage is done.
    const TimeNs language_backward = run.result.end(pass_of(run, 2, PassKind::backward, mb).op);
    CHECK(run.result.start(pass_of(run, 0, PassKind::backward, mb).op) >= language_backward);
    CHECK(run.result.start(pass_of(run, 1, PassKind::backward, mb).op) >= language_backward);
  }
  CHECK(run.result.start(pass_of(run, 2, PassKind::forward, 0).op) ==
        std::max(run.result.end(pass_of(run, 0, PassKind::forward, 0).op),
                 run.result.end(pass_of(run, 1, PassKind::forward, 0).op)));
  const auto every_op = run_training(scenario, {.composites = false});
  CHECK(every_op.result.makespan == run.result.makespan);
  const Graph& graph = every_op.workload.graph;
  CHECK(ops_named(graph, {"send activation", "stage 0 -> 2"}) == 8);
  CHECK(ops_named(graph, {"send activation", "stage 1 -> 2"}) == 8);
  CHECK(ops_named(graph, {"send activation", "stage 1 -> 3"}) == 0);
  CHECK(ops_named(graph, {"send gradient", "stage 2 -> 0"}) == 8);
  CHECK(ops_named(graph, {"send gradient", "stage 2 -> 1"}) == 8);
}

TEST_CASE("modality stages: the simulated iteration is cross-modality 1F1B, recomputed by hand",
          "[workload][modality]") {
  // Each pass's duration from the simulation, its start from a recurrence written here: a rank
  // runs its passes in 1F1B order with as many warm-up forwards as stages on its path to the
  // loss (vision 2, audio 2, language 1 and 0); a forward waits for the stages it reads, a
  // backward for its successor's backward (the last stage's for its own forward).
  const TrainingScenario scenario = with_ideal_network(scenario_text(valm_model(), kValmModality, kValmTraining));
  const TrainingRun run = run_training(scenario);
  constexpr int kMicrobatches = 8;
  const std::vector<int> warmup = {2, 2, 1, 0};
  const std::vector<std::vector<int>> reads = {{}, {}, {0, 1}, {2}};
  const std::vector<int> successor = {2, 2, 3, -1};
  std::vector<std::vector<std::pair<PassKind, int>>> order(4);
  for (int rank = 0; rank < 4; ++rank) {
    auto& o = order[static_cast<std::size_t>(rank)];
    const int w = warmup[static_cast<std::size_t>(rank)];
    for (int mb = 0; mb < w; ++mb) o.emplace_back(PassKind::forward, mb);
    for (int k = 0; k < kMicrobatches - w; ++k) {
      o.emplace_back(PassKind::forward, w + k);
      o.emplace_back(PassKind::backward, k);
    }
    for (int mb = kMicrobatches - w; mb < kMicrobatches; ++mb) o.emplace_back(PassKind::backward, mb);
  }
  std::map<std::tuple<int, PassKind, int>, TimeNs> end;
  std::vector<std::size_t> next(4, 0);
  std::vector<TimeNs> free_at(4, 0);
  for (bool progressed = true; progressed;) {
    progressed = false;
    for (int rank = 0; rank < 4; ++rank) {
      const auto r = static_cast<std::size_t>(rank);
      if (next[r] == order[r].size()) continue;
      const auto [kind, mb] = order[r][next[r]];
      std::vector<std::tuple<int, PassKind, int>> deps;
      if (kind == PassKind::forward) {
        for (int input : reads[r]) deps.emplace_back(input, PassKind::forward, mb);
      } else {
        deps.emplace_back(successor[r] < 0 ? rank : successor[r], successor[r] < 0 ? PassKind::forward : kind, mb);
      }
      TimeNs start = free_at[r];
      bool ready = true;
      for (const auto& dep : deps) {
        const auto it = end.find(dep);
        ready = ready && it != end.end();
        if (it != end.end()) start = std::max(start, it->second);
      }
      if (!ready) continue;
      const PassOp& simulated = pass_of(run, rank, kind, mb);
      CHECK(run.result.start(simulated.op) == start);
      free_at[r] = start + run.result.duration(simulated.op);
      end[{rank, kind, mb}] = free_at[r];
      ++next[r];
      progressed = true;
    }
  }
  CHECK(end.size() == 4u * 2 * kMicrobatches);
}

TEST_CASE("modality stages of a chain are the pipeline of the same layers", "[workload][modality]") {
  // One encoder: its own stage, then the language model's three, is the pipeline that gives
  // the same layers per stage without modality stages.
  const std::string chain = R"({"tp": 2, "pp": 4, "dp": 1, "stage_layers": [4, 2, 1, 1]})";
  const std::string modality = R"({"tp": 2, "pp": 4, "dp": 1, "stage_layers": [4, 2, 1, 1],
                                   "modality_stages": {"vision": 1, "language": 3}})";
  const std::string training = R"({"global_batch": 8, "seq_len": 256, "images": 2})";
  const auto as_chain = run_training(scenario_from(scenario_text(test::vlm_model(false, false), chain, training)));
  const auto as_modules = run_training(scenario_from(scenario_text(test::vlm_model(false, false), modality, training)));
  CHECK(as_modules.result.makespan == as_chain.result.makespan);
  REQUIRE(as_modules.report.stages.size() == as_chain.report.stages.size());
  for (std::size_t s = 0; s < as_chain.report.stages.size(); ++s)
    CHECK(as_modules.report.stages[s].activation_peak == as_chain.report.stages[s].activation_peak);
}

TEST_CASE("modality stages: gradients go only to encoders with something to train", "[workload][modality]") {
  // Only the audio projector trains: the vision stage gets no gradient and runs no backward.
  const auto run = run_training(valm_scenario(kValmModality, valm_model(true, false)), {.composites = false});
  const Graph& graph = run.workload.graph;
  CHECK(ops_named(graph, {"send gradient", "stage 2 -> 0"}) == 0);
  CHECK(ops_named(graph, {"send gradient", "stage 2 -> 1"}) == 8);
  CHECK(ops_named(graph, {"vision-projector", " bwd"}) == 0);
  CHECK(ops_named(graph, {"audio-projector", " wgrad"}) == 8);
}

TEST_CASE("modality stages: what a plan cannot combine them with is refused", "[workload][modality][errors]") {
  auto refused = [](const std::string& parallel, const std::string& model = valm_model()) {
    return [=] { valm_scenario(parallel, model); };
  };
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"tp": 2, "pp": 4, "modality_stages": {"vision": 1, "sound": 1, "language": 2}})",
       "parallel.modality_stages.sound: 'sound' is not a module of the model"},
      {R"({"tp": 2, "pp": 4, "modality_stages": {"vision": 1, "audio-projector": 1, "language": 2}})",
       "'audio-projector' is a projector: it runs on the last stage of the module it reads"},
      {R"({"tp": 2, "pp": 4, "modality_stages": {"vision": 2, "language": 2}})",
       "parallel.modality_stages: expected stages for module 'audio'"},
      {R"({"tp": 2, "pp": 4, "modality_stages": {"vision": 0, "audio": 2, "language": 2}})",
       "parallel.modality_stages.vision: expected an integer > 0, got 0"},
      {R"({"tp": 2, "pp": 2, "modality_stages": {"vision": 1, "audio": 1, "language": 2}})",
       "parallel.modality_stages: the modules' stages add up to 4, parallel.pp is 2"},
      {R"({"tp": 1, "pp": 8, "modality_stages": {"vision": 1, "audio": 3, "language": 4}})",
       "module 'audio' has 2 layers for 3 stages"},
      {R"({"tp": 2, "pp": 4, "schedule": "zb-h1", "modality_stages": {"vision": 1, "audio": 1, "language": 2}})",
       "parallel.schedule: modules on stages of their own run the gpipe or 1f1b schedule, not 'zb-h1'"},
      {R"({"tp": 2, "pp": 4, "vpp": 2, "schedule": "interleaved",
           "modality_stages": {"vision": 1, "audio": 1, "language": 2}})",
       "parallel.vpp: modules on stages of their own need vpp = 1"},
      {R"({"tp": 2, "pp": 4, "stage_layers": [3, 3, 2, 2],
           "modality_stages": {"vision": 1, "audio": 1, "language": 2}})",
       "parallel.stage_layers: the stages of module 'vision' hold 3 layers, the module has 4"},
      {R"({"tp": 2, "pp": 4, "stage_layers": "modules", "modality_stages": {"vision": 1, "audio": 1, "language": 2}})",
       "parallel.stage_layers: \"modules\" is for the encoder-first schedule"},
  };
  for (const auto& [parallel, message] : cases) {
    INFO(parallel);
    CHECK_THROWS_WITH(refused(parallel)(), Contains(message));
  }
  // A model of one module has nothing to split.
  CHECK_THROWS_WITH(scenario_from(scenario_text(kLanguageSpec, R"({"tp": 2, "pp": 2, "modality_stages": {}})",
                                                R"({"global_batch": 8, "seq_len": 256})")),
                    Contains("parallel.modality_stages: modality parallelism needs a model of several modules"));
  // A projector listed away from its module would run on another module's stage.
  const std::string misplaced = fmt::format(
      R"({{"name": "m", "modules": [
            {{"name": "vision", "model": {}, "tokens": "images", "tokens_per_image": {}}},
            {{"name": "text", "model": {}, "inputs": []}},
            {{"name": "projector", "projector": {{}}, "inputs": ["vision"]}},
            {{"name": "language", "model": {}, "inputs": ["projector", "text"]}}]}})",
      kVisionSpec, kImageTokens, kVisionSpec, kLanguageSpec);
  CHECK_THROWS_WITH(
      refused(R"({"tp": 2, "pp": 4, "modality_stages": {"vision": 2, "text": 1, "language": 1}})", misplaced)(),
      Contains("projector 'projector' must be listed right after 'vision'"));
  // A module read by two modules would hand its output to two stages.
  const std::string shared = fmt::format(
      R"({{"name": "m", "modules": [
            {{"name": "vision", "model": {}, "tokens": "images", "tokens_per_image": {}}},
            {{"name": "text", "model": {}}},
            {{"name": "language", "model": {}, "inputs": ["vision", "text"]}}]}})",
      kVisionSpec, kImageTokens, kVisionSpec, kLanguageSpec);
  CHECK_THROWS_WITH(
      refused(R"({"tp": 2, "pp": 4, "modality_stages": {"vision": 2, "text": 1, "language": 1}})", shared)(),
      Contains("module 'vision' is read by several modules"));
}

}  // namespace
}  // namespace weft
