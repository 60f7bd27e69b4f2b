// `weft simulate` on models of several modality modules, through the real binary.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "tests/support/cli_expectations.hpp"
#include "tests/support/run_command.hpp"

namespace weft {
namespace {

using Catch::Matchers::Contains;
using test::experiment;
using test::read_file;
using test::run_weft;
using test::TempDir;

// `weft simulate` of a bundled experiment with --json into `dir`: the run, and its JSON once it
// succeeded.
struct SimulatedExperiment {
  test::CommandResult run;
  nlohmann::json result;
};

SimulatedExperiment simulate_experiment(const std::string& name, const TempDir& dir) {
  const auto file = dir.file(name + ".json");
  SimulatedExperiment out{run_weft("simulate '" + experiment(name) + "' --json '" + file.string() + "'"), {}};
  INFO(out.run.err);
  REQUIRE(out.run.exit_code == 0);
  out.result = nlohmann::json::parse(read_file(file));
  return out;
}

TEST_CASE("the bundled multimodal experiments simulate and report their modules", "[cli][experiments][multimodal]") {
  struct Expected {
    const char* name;
    double samples;
    double tokens_per_sample;  // of the module with the loss
    std::size_t modules;
  };
  // VLMs: 8192-token sequences; T2V: 8 s of video at 4608 latent tokens per second.
  for (const Expected& e :
       {Expected{"vlm-s-16xh800", 256, 8192, 3}, Expected{"vlm-m-32xh800", 256, 8192, 3},
        Expected{"vlm-l-64xh800", 256, 8192, 3}, Expected{"vlm-xl-8192xh100", 2048, 8192, 3},
        Expected{"vlm-xl-16384xh100", 2048, 8192, 3}, Expected{"t2v-s-16xh800", 64, 8 * 4608, 2},
        Expected{"t2v-l-64xh800", 64, 8 * 4608, 2}, Expected{"t2v-xl-3072xh100", 768, 8 * 4608, 2},
        Expected{"t2v-xl-6144xh100", 768, 8 * 4608, 2}, Expected{"alm-s-16xh800", 256, 4096, 3},
        Expected{"valm-s-16xh800", 256, 8192, 5}, Expected{"valm-s-16xh800-modality", 256, 8192, 5}}) {
    INFO(e.name);
    const TempDir dir;
    const auto [run, result] = simulate_experiment(e.name, dir);
    CHECK_THAT(run.out, Contains("trainable), ") && Contains("(balanced "));
    CHECK(result["oom"] == false);
    CHECK(result["mfu"].get<double>() > 0.05);
    CHECK(result["mfu"].get<double>() < 0.65);
    REQUIRE(result["modules"].size() == e.modules);
    const double time = result["iteration_time_s"];
    CHECK(result["tokens_per_s"].get<double>() == Approx(e.samples * e.tokens_per_sample / time));
  }
}

TEST_CASE("the multimodal experiments with per-sample data report what their batches held", "[cli][multimodal]") {
  const TempDir dir;
  const auto [vlm, packed] = simulate_experiment("vlm-s-16xh800-image-text", dir);
  CHECK_THAT(vlm.out, Contains("Batch    256 packed sequences of up to 8192 tokens") &&
                          Contains("Data     image-text-mix (packed): "));
  CHECK(packed["data"]["packed"] == true);
  CHECK(packed["data"]["samples"].get<int>() > 256);  // several samples per sequence
  CHECK(packed["data"]["images"].get<int>() > 0);
  CHECK(packed["data"]["longest_microbatch_tokens"] == 8192);

  const nlohmann::json clips = simulate_experiment("t2v-s-16xh800-video-clips", dir).result;
  const double seconds = clips["data"]["video_seconds"];
  CHECK(seconds >= 64 * 2);
  CHECK(seconds <= 64 * 16);
  // Tokens are the DiT's: 4608 per second of video.
  CHECK(clips["tokens_per_s"].get<double>() == Approx(seconds * 4608 / clips["iteration_time_s"].get<double>()));

  // Up to 8 clips per microbatch: 16 sequences take at least 16 and at most 128 clips.
  const nlohmann::json sequences = simulate_experiment("t2v-s-16xh800-video-packed", dir).result;
  CHECK(sequences["data"]["packed"] == true);
  CHECK(sequences["data"]["samples"].get<int>() > 16);
  CHECK(sequences["data"]["samples"].get<int>() <= 128);
}

TEST_CASE("a frozen text encoder shows no gradients or optimizer states", "[cli][multimodal]") {
  const TempDir dir;
  const auto [run, result] = simulate_experiment("t2v-s-16xh800", dir);
  CHECK_THAT(run.out, Contains("text (llama3-8b x 32) frozen, video (dit-5b x 28)"));
  // The stage table says which layers of which module each stage holds (13/15/16/16).
  CHECK_THAT(run.out, Contains("  0      text 0-12  ") && Contains("  2      text 28-31, video 0-11  ") &&
                          Contains("  3      video 12-27  "));
  CHECK(result["modules"][0]["frozen"] == true);
  // Only the DiT 5B trains: its layers (with adaLN-Zero), patch embedding, final norm and
  // modulation and output projection, counted by hand as in the model tests.
  const double dh = 3584, df = 10240;
  const double dit_layer = 4 * dh * dh + 4 * dh + 2 * dh * df + df + dh + 4 * dh + 6 * dh * dh + 6 * dh;
  CHECK(result["trainable_parameters"].get<double>() ==
        Approx(28 * dit_layer + (64 * dh + dh) + 2 * dh + (2 * dh * dh + 2 * dh) + (dh * 64 + 64)).epsilon(1e-12));
  // Stage 0 holds text-encoder layers only (13 of its 32).
  CHECK(result["parallel"]["stage_layers"][0] == 13);
  CHECK(result["stages"][0]["memory_breakdown_bytes"]["gradients"] == 0);
  CHECK(result["stages"][0]["memory_breakdown_bytes"]["optimizer_states"] == 0);
  CHECK(result["stages"][3]["memory_breakdown_bytes"]["gradients"].get<double>() > 0);
}

TEST_CASE("modality stages put each encoder on GPUs of its own", "[cli][multimodal]") {
  const TempDir dir;
  const auto [run, result] = simulate_experiment("valm-s-16xh800-modality", dir);
  CHECK_THAT(run.out, Contains("modality stages vision 1/audio 1/language 2, stage layers 63/32/") &&
                          Contains("  0      vision 0-62 ") && Contains("  1      audio 0-31 "));
  CHECK(result["parallel"]["modality_stages"] == nlohmann::json({{"vision", 1}, {"audio", 1}, {"language", 2}}));
  // Without modality stages the same model shares one pipeline, and the JSON says so.
  CHECK(simulate_experiment("valm-s-16xh800", dir).result["parallel"]["modality_stages"].is_null());
}

TEST_CASE("modules on meshes of their own: DFLOP's layout against a uniform one", "[cli][multimodal][meshes]") {
  const TempDir dir;
  const auto [run, result] = simulate_experiment("llava-ov-llama3-8b-32xa100-meshes", dir);
  CHECK_THAT(run.out, Contains("module meshes (vision 1 stage x tp 1 x dp 4 = 4 GPUs; language 2 stages x tp 2 x dp "
                               "7 = 28 GPUs)"));
  CHECK(result["gpus"] == 32);
  CHECK(result["parallel"]["module_meshes"] ==
        nlohmann::json({{"vision", {{"tp", 1}, {"dp", 4}, {"stages", 1}, {"gpus", 4}}},
                        {"language", {{"tp", 2}, {"dp", 7}, {"stages", 2}, {"gpus", 28}}}}));
  const auto uniform = simulate_experiment("llava-ov-llama3-8b-32xa100-uniform", dir);
  CHECK(uniform.result["parallel"]["module_meshes"].empty());
  // The same 252 samples: the same model FLOPs, whatever the layout.
  CHECK(result["model_flops_per_iteration"].get<double>() ==
        Approx(uniform.result["model_flops_per_iteration"].get<double>()).epsilon(1e-12));
  // The encoder needs far fewer GPUs than the LLM: DFLOP's layout gives them to the LLM.
  CHECK(result["iteration_time_s"].get<double>() < uniform.result["iteration_time_s"].get<double>());
}

TEST_CASE("modules on meshes of their own on per-sample data: DFLOP's layout against a uniform one",
          "[cli][multimodal][meshes][data]") {
  const TempDir dir;
  const auto [run, result] = simulate_experiment("llava-ov-llama3-8b-32xa100-meshes-data", dir);
  // Each encoder replica is simulated (4), beside each of the LLM's 7 replicas' 2 stages.
  CHECK_THAT(run.out, Contains("18 simulated ranks (one per pipeline stage of each DP replica)"));
  const auto uniform = simulate_experiment("llava-ov-llama3-8b-32xa100-uniform-data", dir);
  CHECK_THAT(uniform.run.out, Contains("16 simulated ranks"));
  // The same 252 samples drawn in the same order: the same model FLOPs, whatever the layout.
  CHECK(result["model_flops_per_iteration"].get<double>() ==
        Approx(uniform.result["model_flops_per_iteration"].get<double>()).epsilon(1e-9));
  CHECK(result["iteration_time_s"].get<double>() < uniform.result["iteration_time_s"].get<double>());
}

TEST_CASE("bad multimodal scenarios exit 2 with the JSON path and the reason", "[cli][errors][multimodal]") {
  test::expect_simulate_rejects(R"({"model": "llava-ov-llama3-8b", "cluster": {"base": "dgx-a100-superpod", "gpus": 32},
                                    "parallel": {"tp": 2, "pp": 4, "dp": 5,
                                                 "modality_stages": {"vision": 1, "language": 3},
                                                 "modules": {"vision": {"tp": 1, "dp": 4}}},
                                    "training": {"global_batch": 240, "seq_len": 6144, "images": 8}})",
                                "parallel.modules: the modules' meshes hold 34 GPUs (vision 1 stage x tp 1 x dp 4 = 4 "
                                "GPUs; language 3 stages x tp 2 x dp 5 = 30 GPUs), not the cluster's 32");
  test::expect_simulate_rejects(R"({"model": "llava-ov-llama3-8b", "cluster": {"base": "dgx-a100-superpod", "gpus": 32},
                                    "parallel": {"tp": 2, "pp": 4, "dp": 5,
                                                 "modality_stages": {"vision": 1, "language": 3},
                                                 "modules": {"vision": {"tp": 1, "dp": 2}}},
                                    "training": {"global_batch": 240, "seq_len": 6144, "images": 8}})",
                                "--unfold: modules on meshes of their own (parallel.modules) are simulated folded",
                                "--unfold");
  test::expect_simulate_rejects(R"({"model": "llava-ov-llama3-8b", "cluster": {"base": "dgx-a100-superpod", "gpus": 32},
                                    "stack": {"base": "megatron-core", "tp_comm_overlap": false},
                                    "parallel": {"tp": 2, "pp": 4, "dp": 5, "sequence_parallel": true,
                                                 "modality_stages": {"vision": 1, "language": 3},
                                                 "modules": {"vision": {"tp": 1, "dp": 2}}},
                                    "training": {"global_batch": 240, "seq_len": 6144, "images": 8}})",
                                "--emit-plan: parallel.modules: with sequence_parallel each rank hands on its TP shard",
                                "--emit-plan plan.json");
  // Video frames are some of a sample's images, and their pooled tokens must fit in its sequence.
  const std::string llava = R"({"model": "llava-ov-llama3-8b", "cluster": {"base": "dgx-a100-superpod", "gpus": 8},
                                "parallel": {"tp": 2, "pp": 2, "dp": 2}, "training": {"global_batch": 16, )";
  test::expect_simulate_rejects(llava + R"("seq_len": 6144, "images": 2, "frames": 3}})",
                                "training.frames: expected at most training.images = 2 (the video frames among a "
                                "sample's images)");
  test::expect_simulate_rejects(
      llava + R"("seq_len": 1024, "images": 3, "frames": 2}})",
      "training.seq_len: 1 images of 729 and 2 frames of 196 tokens do not fit in 1024 tokens");
  // On per-sample data only an image encoder's replicas can deal out a slot.
  test::expect_simulate_rejects(R"({"model": "t2v-s", "cluster": {"base": "h800-testbed", "gpus": 16},
                                    "parallel": {"tp": 1, "pp": 2, "dp": 8, "modality_stages": {"text": 1, "video": 1},
                                                 "modules": {"text": {"tp": 2, "dp": 4}}},
                                    "training": {"global_batch": 64, "seq_len": 256},
                                    "data": {"dataset": "video-clips", "seed": 1, "pad_to": 256}})",
                                "parallel.modules.text.dp: with per-sample data only an image encoder's DP may differ "
                                "from parallel.dp (its replicas deal a slot's images); module 'text' takes its tokens "
                                "from text");
  const std::string rest = R"("cluster": {"base": "h800-testbed", "gpus": 16},
                              "parallel": {"tp": 4, "pp": 4, "stage_layers": "parameters"},
                              "training": {"global_batch": 16, "seq_len": 8192, "images": 8})";
  test::expect_simulate_rejects(R"({"model": {"name": "v", "modules": [
                                      {"name": "vision", "model": "vit-5b", "tokens": "images", "tokens_per_image": 169},
                                      {"name": "language", "model": "llama3-8b", "inputs": ["audio"]}]}, )" +
                                    rest + "}",
                                "model.modules[1].inputs[0]: 'audio' is not a module listed before this one");
  test::expect_simulate_rejects(R"({"model": "vlm-s", "cluster": {"base": "h800-testbed", "gpus": 16},
                                    "parallel": {"tp": 4, "pp": 4, "stage_layers": "parameters"},
                                    "training": {"global_batch": 16, "seq_len": 8192}})",
                                "training.images: module 'vision': its tokens are images; give images per sample");
  test::expect_simulate_rejects(R"({"model": "alm-s", "cluster": {"base": "h800-testbed", "gpus": 16},
                                    "parallel": {"tp": 4, "pp": 4, "stage_layers": "parameters"},
                                    "training": {"global_batch": 16, "seq_len": 4096}})",
                                "training.audio_seconds: module 'audio': its tokens are audio");
  test::expect_simulate_rejects(R"({"model": "t2v-s", "cluster": {"base": "h800-testbed", "gpus": 16},
                                    "parallel": {"tp": 4, "pp": 4}, "training": {"global_batch": 16, "seq_len": 2048},
                                    "data": {"dataset": "video-clips", "max_samples": 8}})",
                                "data.max_samples: applies to packed sequences");
  test::expect_simulate_rejects(R"({"model": "valm-s", "cluster": {"base": "h800-testbed", "gpus": 16},
                                    "parallel": {"tp": 4, "pp": 4, "modality_stages": {"vision": 1, "language": 3}},
                                    "training": {"global_batch": 16, "seq_len": 8192, "images": 8,
                                                 "audio_seconds": 30}})",
                                "parallel.modality_stages: expected stages for module 'audio'");
}

}  // namespace
}  // namespace weft
