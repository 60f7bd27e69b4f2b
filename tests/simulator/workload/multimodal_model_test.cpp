// Training iterations of models of several modules: the chain of modules through the pipeline,
// the frozen rule, and what a scenario may not combine with them.
#include <fmt/format.h>
#include <catch2/catch.hpp>

#include "cost_models/calibrated_cost_model.hpp"
#include "simulator/workload/multimodal_model.hpp"
#include "simulator/workload/training_workload.hpp"
#include "tests/simulator/workload/multimodal_test_support.hpp"
#include "tests/support/run_command.hpp"

namespace weft {
namespace {

using Catch::Matchers::Contains;
using test::kImageTokens;
using test::kLanguageHidden;
using test::kLanguageSpec;
using test::kProjectorFfn;
using test::kVisionHidden;
using test::kVisionSpec;
using test::ops_named;
using test::run_training;
using test::scenario_from;
using test::scenario_text;
using test::vlm_model;

const std::string kTraining = R"({"global_batch": 8, "seq_len": 256, "images": 2})";
// Stage 0: vision layers 0-1; stage 1: vision layers 2-3 and the projector; stages 2-3: language.
const std::string kFourStages = R"({"tp": 2, "pp": 4, "dp": 1, "stage_layers": [2, 2, 2, 2]})";

TrainingScenario vlm(bool vision_frozen, bool language_frozen, const std::string& parallel = kFourStages) {
  return scenario_from(scenario_text(vlm_model(vision_frozen, language_frozen), parallel, kTraining));
}

TEST_CASE("a VLM's model FLOPs are its modules' own, by the frozen rule", "[workload][multimodal]") {
  // Oracles: the language model alone on the same sequences, the vision encoder alone on the
  // images (one sample per image), and the projector's two GEMMs by hand.
  const TrainingScenario language = scenario_from(
      scenario_text(kLanguageSpec, R"({"tp": 2, "pp": 2, "dp": 2})", R"({"global_batch": 8, "seq_len": 256})"));
  const TrainingScenario vision =
      scenario_from(scenario_text(kVisionSpec, R"({"tp": 2, "pp": 2, "dp": 2})",
                                  fmt::format(R"({{"global_batch": 16, "seq_len": {}}})", kImageTokens)));
  const double language_flops = run_training(language).report.model_flops_per_iteration;
  const double vision_flops = run_training(vision).report.model_flops_per_iteration;
  const double image_tokens = 8.0 * 2 * kImageTokens;
  const double projector_forward =
      2.0 * image_tokens * (kVisionHidden * kProjectorFfn + kProjectorFfn * kLanguageHidden);

  CHECK(run_training(vlm(false, false)).report.model_flops_per_iteration ==
        Approx(language_flops + vision_flops + 3 * projector_forward).epsilon(1e-12));
  // Frozen vision with nothing upstream: forward only. Frozen language after the trainable
  // projector: forward and input gradients (papers/004 §4.2).
  CHECK(run_training(vlm(true, true)).report.model_flops_per_iteration ==
        Approx(vision_flops / 3 + 2 * language_flops / 3 + 3 * projector_forward).epsilon(1e-12));
}

TEST_CASE("frozen modules compute only the gradients the frozen rule asks for", "[workload][multimodal]") {
  const auto run = run_training(vlm(true, true), {.composites = false});
  const Graph& graph = run.workload.graph;
  CHECK(ops_named(graph, {"vision.", " fwd"}) > 0);
  CHECK(ops_named(graph, {"vision.", " bwd"}) == 0);
  CHECK(ops_named(graph, {"vision.", " wgrad"}) == 0);
  // The projector trains: weight gradients for both layers, no input gradient for its first.
  CHECK(ops_named(graph, {"projector.fc1 wgrad"}) == 8);
  CHECK(ops_named(graph, {"projector.fc2 wgrad"}) == 8);
  CHECK(ops_named(graph, {"projector.fc1 bwd"}) == 0);
  CHECK(ops_named(graph, {"projector.fc2 bwd"}) == 8);
  // The language model passes gradients back to it but computes none for its weights.
  CHECK(ops_named(graph, {"language.L0.", " bwd"}) > 0);
  CHECK(ops_named(graph, {"language.", " wgrad"}) == 0);
  // No gradient goes back to the stage of frozen vision layers alone.
  CHECK(ops_named(graph, {"send gradient", "stage 2 -> 1"}) == 8);
  CHECK(ops_named(graph, {"send gradient", "stage 1 -> 0"}) == 0);

  const auto trainable = run_training(vlm(false, false), {.composites = false});
  CHECK(ops_named(trainable.workload.graph, {"vision.", " wgrad"}) > 0);
  CHECK(ops_named(trainable.workload.graph, {"send gradient", "stage 1 -> 0"}) == 8);
}

TEST_CASE("frozen parameters hold no gradients or optimizer states", "[workload][multimodal]") {
  const auto run = run_training(vlm(true, true));
  REQUIRE(run.report.stages.size() == 4);
  // Per TP rank (tp 2): fc1 splits its columns (and bias), fc2 its rows (its bias is whole).
  const std::int64_t projector =
      kVisionHidden * (kProjectorFfn / 2) + kProjectorFfn / 2 + (kProjectorFfn / 2) * kLanguageHidden + kLanguageHidden;
  for (std::size_t s = 0; s < 4; ++s) {
    INFO("stage " << s);
    const StaticMemory& memory = run.report.stages[s].static_memory;
    CHECK(memory.parameters > 0);
    CHECK(memory.gradients == (s == 1 ? 4 * projector : 0));          // bf16 training: fp32 gradients (megatron-core)
    CHECK(memory.optimizer_states == (s == 1 ? 12 * projector : 0));  // fp32 master weights, Adam moments
  }
  CHECK(run.report.trainable_parameters ==
        kVisionHidden * kProjectorFfn + kProjectorFfn + kProjectorFfn * kLanguageHidden + kLanguageHidden);
}

TEST_CASE("the activation handed between modules is the projector's output", "[workload][multimodal]") {
  const auto run = run_training(vlm(false, false), {.composites = false});
  const Graph& graph = run.workload.graph;
  // Stage 1 -> 2 carries each microbatch's image tokens at the language model's width (bf16).
  const std::vector<std::pair<std::string, Bytes>> expected = {{"stage 0 -> 1", 2 * kImageTokens * kVisionHidden * 2},
                                                               {"stage 1 -> 2", 2 * kImageTokens * kLanguageHidden * 2},
                                                               {"stage 2 -> 3", 256 * kLanguageHidden * 2}};
  for (const auto& [stages, bytes] : expected) {
    INFO(stages);
    int sends = 0;
    for (std::uint32_t i = 0; i < graph.op_count(); ++i) {
      const std::string_view name = graph.op_name(OpId(i));
      if (name.find("send activation") == std::string_view::npos || name.find(stages) == std::string_view::npos)
        continue;
      ++sends;
      CHECK(graph.work(graph.op_work_id(OpId(i))).network_bytes == bytes);
    }
    CHECK(sends == 8);  // one per microbatch
  }
}

TEST_CASE("a merging projector normalises the merged tokens and sends a quarter of them", "[workload][multimodal]") {
  std::string model = vlm_model(false, false);
  const std::string plain = fmt::format(R"({{"ffn_hidden": {}}})", kProjectorFfn);
  const std::string merging =
      fmt::format(R"({{"ffn_hidden": {}, "token_merge": 4, "norm": "layernorm"}})", kProjectorFfn);
  model.replace(model.find(plain), plain.size(), merging);
  const auto run = run_training(scenario_from(scenario_text(model, kFourStages, kTraining)), {.composites = false});
  const Graph& graph = run.workload.graph;
  // Each microbatch's 2 images of 16 patch tokens become 2 x 4 tokens at the language width.
  int sends = 0;
  for (std::uint32_t i = 0; i < graph.op_count(); ++i) {
    const std::string_view name = graph.op_name(OpId(i));
    if (name.find("send activation") == std::string_view::npos || name.find("stage 1 -> 2") == std::string_view::npos)
      continue;
    ++sends;
    CHECK(graph.work(graph.op_work_id(OpId(i))).network_bytes == 2 * (kImageTokens / 4) * kLanguageHidden * 2);
  }
  CHECK(sends == 8);
  // The norm reads and writes 8 merged tokens of 4 x 256 values (TP 2 does not split it).
  std::size_t norms = 0;
  for (std::uint32_t i = 0; i < graph.op_count(); ++i) {
    const std::string_view name = graph.op_name(OpId(i));
    if (name.find("projector.norm") == std::string_view::npos || name.find("fwd") == std::string_view::npos) continue;
    ++norms;
    CHECK(graph.work(graph.op_work_id(OpId(i))).memory_bytes == 2 * 8 * (4 * kVisionHidden) * 2);
  }
  CHECK(norms == 8);
  // Parameters: the LayerNorm's weight and bias over 1,024, and fc1 reading 1,024 instead of 256.
  const auto parameters = [](const std::string& text) {
    const JsonDocument document = JsonDocument::parse_text(text, "model.json");
    return MultimodalModel(load_multimodal_spec(document.root())).parameter_count();
  };
  CHECK(parameters(model) - parameters(vlm_model(false, false)) ==
        2 * 4 * kVisionHidden + (4 * kVisionHidden - kVisionHidden) * kProjectorFfn);
}

TEST_CASE("a pooling projector hands on each video frame's pooled tokens", "[workload][multimodal]") {
  // LLaVA-OneVision's pooling after the projector, here 16 patch tokens to 4 a frame; each sample
  // holds 2 images, one of them a video frame.
  std::string model = vlm_model(false, false);
  const std::string plain = fmt::format(R"({{"ffn_hidden": {}}})", kProjectorFfn);
  model.replace(model.find(plain), plain.size(),
                fmt::format(R"({{"ffn_hidden": {}, "tokens_per_frame": 4}})", kProjectorFfn));
  const std::string training = R"({"global_batch": 8, "seq_len": 256, "images": 2, "frames": 1})";
  const auto run = run_training(scenario_from(scenario_text(model, kFourStages, training)), {.composites = false});
  const Graph& graph = run.workload.graph;
  std::size_t sends = 0;
  std::size_t pools = 0;
  for (std::uint32_t i = 0; i < graph.op_count(); ++i) {
    const std::string_view name = graph.op_name(OpId(i));
    const OpWork& work = graph.work(graph.op_work_id(OpId(i)));
    if (name.find("send activation") != std::string_view::npos && name.find("stage 1 -> 2") != std::string_view::npos) {
      ++sends;  // the image's 16 tokens and the frame's 4, at the language width (bf16)
      CHECK(work.network_bytes == (kImageTokens + 4) * kLanguageHidden * 2);
    }
    if (name.find("projector.frame_pool fwd") != std::string_view::npos) {
      ++pools;  // reads the frame's 16 projected tokens, writes 4 (TP 2 without SP keeps them whole)
      CHECK(work.memory_bytes == (kImageTokens + 4) * kLanguageHidden * 2);
    }
  }
  CHECK(sends == 8);
  CHECK(pools == 8);
  // The vision layers see both images whole: the same ops as without pooling.
  const auto unpooled =
      run_training(scenario_from(scenario_text(vlm_model(false, false), kFourStages,
                                               R"({"global_batch": 8, "seq_len": 256, "images": 2})")),
                   {.composites = false});
  CHECK(run.workload.model_flops_per_iteration == Approx(unpooled.workload.model_flops_per_iteration));
  CHECK(ops_named(graph, {"vision.L0", "fwd"}) == ops_named(unpooled.workload.graph, {"vision.L0", "fwd"}));
}

TEST_CASE("passes as composites give every op's answer with frozen modules", "[workload][multimodal]") {
  const std::vector<std::string> plans = {
      kFourStages,
      R"({"tp": 2, "pp": 4, "dp": 1, "stage_layers": [2, 2, 2, 2], "schedule": "zb-h1"})",
      R"({"tp": 2, "pp": 4, "dp": 1, "stage_layers": [4, 1, 1, 2], "schedule": "gpipe", "recompute": "full"})",
      R"({"tp": 2, "pp": 2, "dp": 2, "vpp": 2, "schedule": "interleaved", "sequence_parallel": true, "zero": 1,
          "stage_layers": [3, 2, 1, 2]})",
      R"({"tp": 2, "pp": 2, "dp": 2, "recompute": "selective", "stage_layers": [4, 4]})",
  };
  for (const std::string& parallel : plans) {
    for (const auto& [vision_frozen, language_frozen] : {std::pair{true, true}, {true, false}, {false, true}}) {
      INFO(parallel << " vision frozen " << vision_frozen << " language frozen " << language_frozen);
      const TrainingScenario scenario = vlm(vision_frozen, language_frozen, parallel);
      const auto composites = run_training(scenario);
      const auto every_op = run_training(scenario, {.composites = false});
      CHECK(composites.result.makespan == every_op.result.makespan);
      REQUIRE(composites.report.stages.size() == every_op.report.stages.size());
      for (std::size_t s = 0; s < every_op.report.stages.size(); ++s) {
        CHECK(composites.report.stages[s].peak_memory == every_op.report.stages[s].peak_memory);
      }
    }
  }
}

TEST_CASE("stages balanced by parameters hold the projector with the vision layers", "[workload][multimodal]") {
  const TrainingScenario scenario = scenario_from(
      scenario_text(vlm_model(false, false), R"({"tp": 2, "pp": 4, "stage_layers": "parameters"})", kTraining));
  CHECK(scenario.parallel.partition == ParallelPlan::Partition::parameters);
  // Vision layers are light (hidden 256): all four and the projector (3.6 M parameters) fit
  // under the budget of two language layers (4.7 M), which the embedding or the head make too
  // heavy to pair.
  CHECK(scenario.parallel.stage_layers == std::vector<int>{4, 1, 2, 1});
  CHECK_THROWS_WITH(scenario_from(scenario_text(vlm_model(false, false),
                                                R"({"tp": 1, "pp": 8, "vpp": 2, "schedule": "interleaved",
                                                    "stage_layers": "parameters"})",
                                                R"({"global_batch": 8, "seq_len": 256, "images": 2})")),
                    Contains("parallel.stage_layers: pp x vpp = 16 stages for 8 layers"));
  CHECK_THROWS_WITH(
      scenario_from(scenario_text(vlm_model(false, false), R"({"tp": 2, "pp": 4, "stage_layers": "even"})", kTraining)),
      Contains("parallel.stage_layers: expected a list of layers per stage, \"parameters\", \"time\" or "));
}

TEST_CASE("stages balanced by compute time give frozen vision layers more of them", "[workload][multimodal]") {
  // Papers/004 §4.2: the frozen encoder has no backward, so balancing one forward and one
  // backward gives its stages more layers than balancing parameters, and runs faster.
  auto frozen_vlm_s = [](const char* partition) {
    return scenario_from(fmt::format(R"({{"model": "vlm-s-frozen", "cluster": {{"base": "h800-testbed", "gpus": 16}},
                                           "parallel": {{"tp": 4, "pp": 4, "stage_layers": "{}"}},
                                           "training": {{"global_batch": 8, "seq_len": 8192, "images": 8}}}})",
                                     partition));
  };
  const TrainingScenario by_parameters = frozen_vlm_s("parameters");
  const TrainingScenario by_time = frozen_vlm_s("time");
  CHECK(by_time.parallel.partition == ParallelPlan::Partition::time);
  CHECK(by_time.parallel.stage_layers[0] > by_parameters.parallel.stage_layers[0]);
  CHECK(run_training(by_time).result.makespan < run_training(by_parameters).result.makespan);
}

TEST_CASE("a calibration profile's costs balance a time partition", "[workload][multimodal][calibration]") {
  // A profile in which attention reaches 1% of peak makes the language layers' long causal
  // attention (8,192 tokens) far heavier than the vision layers' attention within each image: the
  // first stage, which holds the vision layers, takes more of them than under the roofline.
  auto slow_attention = std::make_shared<CalibratedCostModel>("H800");
  slow_attention->set_peak_flops(Dtype::bf16, 989e12);
  const LogGridTable one_percent({{1.0}, {1.0}, {1.0}}, {0.01});
  for (OpClass pass : {OpClass::attention_fwd, OpClass::attention_bwd}) {
    for (bool causal : {false, true}) slow_attention->set_attention(pass, Dtype::bf16, causal, one_percent);
  }
  const std::string text = R"({"model": "vlm-s", "cluster": {"base": "h800-testbed", "gpus": 16},
                               "parallel": {"tp": 4, "pp": 4, "stage_layers": "time"},
                               "training": {"global_batch": 8, "seq_len": 8192, "images": 8}})";
  const TrainingScenario roofline = scenario_from(text);
  const TrainingScenario calibrated = scenario_from(text, slow_attention);
  CHECK(calibrated.cluster.calibration == slow_attention);
  CHECK(calibrated.parallel.stage_layers[0] > roofline.parallel.stage_layers[0]);
}

TEST_CASE("encoder-first places the encoders on every stage's first chunk and runs them first",
          "[workload][multimodal]") {
  const std::string plan = R"({"tp": 2, "pp": 2, "dp": 2, "vpp": 2, "schedule": "encoder-first",
                               "stage_layers": "modules"})";
  const TrainingScenario scenario = scenario_from(scenario_text(vlm_model(false, false), plan, kTraining));
  // Vision layers over the first chunks of both stages, language layers over the second chunks.
  CHECK(scenario.parallel.stage_layers == std::vector<int>{2, 2, 2, 2});
  const auto composites = run_training(scenario);
  const auto every_op = run_training(scenario, {.composites = false});
  CHECK(composites.result.makespan == every_op.result.makespan);
  // Stage 0 keeps the vision activations of every microbatch (4 per replica) until the backbone
  // is done, more than interleaved 1F1B over the same chunks keeps in flight (papers/001 §8.4:
  // Optimus's memory grows with the encoder work it runs ahead).
  const auto interleaved = run_training(scenario_from(scenario_text(
      vlm_model(false, false),
      R"({"tp": 2, "pp": 2, "dp": 2, "vpp": 2, "schedule": "interleaved", "stage_layers": [2, 2, 2, 2]})", kTraining)));
  CHECK(composites.report.stages[0].activation_peak > interleaved.report.stages[0].activation_peak);
  CHECK_THROWS_WITH(scenario_from(scenario_text(vlm_model(false, false),
                                                R"({"tp": 2, "pp": 4, "schedule": "encoder-first"})", kTraining)),
                    Contains("parallel.vpp: the encoder-first schedule runs two chunks per stage"));
  CHECK_THROWS_WITH(scenario_from(scenario_text(vlm_model(false, false),
                                                R"({"tp": 2, "pp": 4, "stage_layers": "modules"})", kTraining)),
                    Contains("parallel.stage_layers: \"modules\" puts every module but the last"));
  CHECK_THROWS_WITH(
      scenario_from(scenario_text(
          vlm_model(false, false),
          R"({"tp": 1, "pp": 8, "vpp": 2, "schedule": "encoder-first", "stage_layers": "modules"})", kTraining)),
      Contains("parallel.stage_layers: pp = 8 stages for 4 layers before the last module"));
}

TEST_CASE("a tied LM head after other modules syncs with the stage of its embedding", "[workload][multimodal]") {
  const std::string model = fmt::format(
      R"({{"name": "vlm", "modules": [
            {{"name": "vision", "model": {}, "tokens": "images", "tokens_per_image": {}}},
            {{"name": "projector", "projector": {{}}}},
            {{"name": "language", "model": {}}}]}})",
      kVisionSpec, kImageTokens, kLanguageSpec.substr(0, kLanguageSpec.rfind('}')) + R"(, "tied_embeddings": true})");
  const TrainingScenario scenario = scenario_from(scenario_text(model, kFourStages, kTraining));
  const auto every_op = run_training(scenario, {.composites = false});
  const Graph& graph = every_op.workload.graph;
  // The language embedding is on stage 2 (with language layer 0), the head on stage 3.
  std::vector<DeviceId> devices;
  for (std::uint32_t i = 0; i < graph.op_count(); ++i) {
    if (graph.op_name(OpId(i)) == "embedding grad all-reduce") devices.push_back(graph.op_device(OpId(i)));
  }
  REQUIRE(devices.size() == 2);
  CHECK(devices[0] == every_op.workload.ranks[2].device);
  CHECK(devices[1] == every_op.workload.ranks[3].device);
  CHECK(run_training(scenario).result.makespan == every_op.result.makespan);
}

TEST_CASE("what models of several modules cannot be combined with is refused", "[workload][multimodal]") {
  auto refused = [](const std::string& text, const std::string& message) {
    INFO(text);
    CHECK_THROWS_WITH(scenario_from(text), Contains(message));
  };
  refused(scenario_text(vlm_model(false, false), kFourStages, R"({"global_batch": 8, "seq_len": 256})"),
          "training.images: module 'vision': its tokens are images");
  refused(
      scenario_text(vlm_model(false, false), R"({"tp": 1, "cp": 2, "pp": 4, "stage_layers": [2, 2, 2, 2]})", kTraining),
      "parallel.cp: context parallelism over a model of several modules is not supported");
  refused(scenario_text(vlm_model(false, false), R"({"tp": 8, "pp": 1, "stage_layers": [8]})", kTraining),
          "parallel.tp: module 'vision': 8 does not divide attention heads 4");
  refused(scenario_text(R"({"name": "all frozen", "modules": [
                            {"name": "vision", "model": "vit-5b", "tokens": "images", "tokens_per_image": 16,
                             "frozen": true},
                            {"name": "language", "model": "llama3-8b", "frozen": true}]})",
                        R"({"tp": 8, "pp": 1})", kTraining),
          "every module is frozen: nothing to train");
  const std::string with_data = R"({"model": )" + vlm_model(false, false) +
                                R"(, "cluster": {"base": "dgx-h100", "gpus": 8}, "parallel": )" + kFourStages +
                                R"(, "training": {"global_batch": 8, "micro_batch": 2, "seq_len": 256},
                        "data": {"dataset": "web-text-mix"}})";
  refused(with_data,
          "training.micro_batch: with packing, or samples of images, video or audio, a microbatch is one sample");
  const JsonDocument sweep =
      JsonDocument::parse_text(scenario_text(vlm_model(false, false), kFourStages, kTraining), "sweep.json");
  CHECK(load_sweep_scenario(sweep.root()).model.modules.size() == 3);  // a sweep takes every module
}

// A VLM scenario whose samples come from a JSON Lines file of (text tokens, images) pairs.
TrainingScenario vlm_with_samples(const test::TempDir& dir, const std::vector<std::pair<int, int>>& samples,
                                  bool pack = false) {
  std::string lines;
  for (const auto& [text, images] : samples)
    lines += fmt::format("{{\"text_tokens\": {}, \"images\": {}}}\n", text, images);
  const std::string file = dir.write("samples.jsonl", lines).string();
  return scenario_from(fmt::format(R"({{"model": {}, "cluster": {{"base": "dgx-h100", "gpus": 8}}, "parallel": {},
                                       "training": {{"global_batch": {}, "seq_len": 256}},
                                       "data": {{"samples": "{}", "pad_to": 32, "pack": {}}}}})",
                                   vlm_model(false, false), kFourStages, pack ? 4 : samples.size(), file, pack));
}

TEST_CASE("samples that all hold the uniform batch's images give the uniform iteration", "[workload][multimodal]") {
  // 256-token sequences with 2 images of 16 tokens: 224 text tokens each.
  const test::TempDir dir;
  const TrainingScenario data = vlm_with_samples(dir, std::vector<std::pair<int, int>>(8, {224, 2}));
  const auto uniform = run_training(vlm(false, false));
  const auto drawn = run_training(data);
  CHECK(drawn.result.makespan == uniform.result.makespan);
  CHECK(drawn.report.model_flops_per_iteration == Approx(uniform.report.model_flops_per_iteration).epsilon(1e-12));
  REQUIRE(drawn.report.stages.size() == uniform.report.stages.size());
  for (std::size_t s = 0; s < uniform.report.stages.size(); ++s) {
    CHECK(drawn.report.stages[s].peak_memory == uniform.report.stages[s].peak_memory);
  }
}

TEST_CASE("a microbatch without images costs the vision layers nothing", "[workload][multimodal]") {
  // Alternating samples: 256 text tokens and no image, or 224 text tokens and 2 images.
  const test::TempDir dir;
  std::vector<std::pair<int, int>> samples;
  for (int i = 0; i < 8; ++i) samples.push_back(i % 2 == 0 ? std::pair{256, 0} : std::pair{224, 2});
  const auto drawn = run_training(vlm_with_samples(dir, samples));
  // Oracles: the uniform VLM (every microbatch with 2 images) and the language model alone.
  const double with_images = run_training(vlm(false, false)).report.model_flops_per_iteration;
  const TrainingScenario language = scenario_from(
      scenario_text(kLanguageSpec, R"({"tp": 2, "pp": 2, "dp": 2})", R"({"global_batch": 8, "seq_len": 256})"));
  const double text_only = run_training(language).report.model_flops_per_iteration;
  CHECK(drawn.report.model_flops_per_iteration == Approx(with_images / 2 + text_only / 2).epsilon(1e-12));
  REQUIRE(drawn.report.data);
  CHECK(drawn.report.data->images == 8);
  CHECK(drawn.report.data->distinct_shapes == 2);
  CHECK(run_training(vlm_with_samples(dir, samples), {.composites = false}).result.makespan == drawn.result.makespan);
}

TEST_CASE("packed VLM sequences hold their samples' images", "[workload][multimodal]") {
  // Sequences of at most 256 tokens: [100 + 1 image, 80 + 2 images] = 100+16+80+32 = 228,
  // then [200 + 3 images] = 248, [50, 60, 70] = 180, [240 + 1 image] = 256.
  const test::TempDir dir;
  const TrainingScenario scenario =
      vlm_with_samples(dir, {{100, 1}, {80, 2}, {200, 3}, {50, 0}, {60, 0}, {70, 0}, {240, 1}}, true);
  const auto run = run_training(scenario);
  REQUIRE(run.workload.shapes);
  std::vector<SampleShape> expected = {{256, 3, 0.0}, {256, 3, 0.0}, {192, 0, 0.0}, {256, 1, 0.0}};
  CHECK(run.workload.shapes->shapes == expected);
  CHECK(run.report.data->samples == 7);
  CHECK(run.report.data->sample_tokens == 228 + 248 + 180 + 256);
  CHECK(run.report.samples_per_s == Approx(7 / run.report.iteration_time_s));
}

TEST_CASE("drawn image tokens that do not split over the TP group are refused", "[workload][multimodal]") {
  const test::TempDir dir;
  const std::string file = dir.write("samples.jsonl", "{\"text_tokens\": 10, \"images\": 1}\n").string();
  // 16-token images over tp 2 split; 9-token ones do not.
  const std::string model = vlm_model(false, false);
  const std::string odd = model.substr(0, model.find("\"tokens_per_image\": 16")) + "\"tokens_per_image\": 9" +
                          model.substr(model.find("\"tokens_per_image\": 16") + 22);
  const TrainingScenario scenario = scenario_from(fmt::format(
      R"({{"model": {}, "cluster": {{"base": "dgx-h100", "gpus": 8}},
          "parallel": {{"tp": 2, "pp": 4, "stage_layers": [2, 2, 2, 2], "sequence_parallel": true}},
          "training": {{"global_batch": 1, "seq_len": 256}}, "data": {{"samples": "{}", "pad_to": 32}}}})",
      odd, file));
  CHECK_THROWS_WITH(
      scenario.microbatch_shapes(),
      Contains("data: a microbatch of 1 images, 0 s of video and 0 s of audio gives module 'vision': the 9 tokens of "
               "a microbatch per CP rank do not split over tp = 2 (sequence parallelism)"));
}

TEST_CASE("a gradient passes through a frozen module's chunk to the trainable one before it",
          "[workload][multimodal]") {
  // A second encoder that reads the data (not the vision encoder) sits, frozen, between the
  // trainable vision stages and the language model: its stage computes nothing backward but
  // relays the language model's gradient to the projector's stage.
  const std::string model = fmt::format(
      R"({{"name": "two encoders", "modules": [
            {{"name": "vision", "model": {}, "tokens": "images", "tokens_per_image": {}}},
            {{"name": "projector", "projector": {{}}}},
            {{"name": "text", "model": {}, "frozen": true, "inputs": []}},
            {{"name": "language", "model": {}, "inputs": ["projector", "text"]}}]}})",
      kVisionSpec, kImageTokens, kVisionSpec, kLanguageSpec);
  const TrainingScenario scenario =
      scenario_from(scenario_text(model, R"({"tp": 2, "pp": 4, "stage_layers": [4, 4, 2, 2]})", kTraining));
  const auto every_op = run_training(scenario, {.composites = false});
  const Graph& graph = every_op.workload.graph;
  CHECK(ops_named(graph, {"text.", " bwd"}) == 0);
  CHECK(ops_named(graph, {"send gradient", "stage 2 -> 1"}) == 8);
  CHECK(ops_named(graph, {"send gradient", "stage 1 -> 0"}) == 8);
  CHECK(ops_named(graph, {"projector.linear wgrad"}) == 8);
  CHECK(run_training(scenario).result.makespan == every_op.result.makespan);
  CHECK_THROWS_WITH(scenario_from(scenario_text(vlm_model(false, false),
                                                R"({"tp": 2, "pp": 4, "stage_layers": [4, 0, 2, 2]})", kTraining)),
                    Contains("parallel.stage_layers: entry 1 is 0: only the first and the last virtual stage"));
  CHECK_THROWS_WITH(scenario_from(scenario_text(vlm_model(false, false), kFourStages,
                                                R"({"global_batch": 8, "seq_len": 16, "images": 2})")),
                    Contains("training.seq_len: 2 images of 16 tokens do not fit in 16 tokens"));
}

}  // namespace
}  // namespace weft
