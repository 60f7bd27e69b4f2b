// Models of several modality modules: how a scenario gives them, and what is refused.
#include "simulator/workload/multimodal_spec.hpp"

#include <catch2/catch.hpp>

#include "simulator/workload/model.hpp"

namespace weft {
namespace {

using Catch::Matchers::Contains;

MultimodalSpec parse(const std::string& text) {
  const JsonDocument document = JsonDocument::parse_text(text, "model.json");
  return load_multimodal_spec(JsonCursor(document.root().json(), "model"));
}

std::string with_modules(const std::string& modules) { return R"({"name": "m", "modules": [)" + modules + "]}"; }

const std::string kVision = R"({"name": "vision", "model": "vit-5b", "tokens": "images", "tokens_per_image": 169})";
const std::string kLanguage = R"({"name": "language", "model": "llama3-8b"})";

TEST_CASE("a model name gives one module, a VLM chains vision, projector and language", "[workload][multimodal]") {
  const MultimodalSpec single = parse(R"("llama3-8b")");
  REQUIRE(single.modules.size() == 1);
  CHECK_FALSE(single.multimodal());
  CHECK(single.name == "llama3-8b");
  CHECK(single.layers() == 32);

  const MultimodalSpec vlm = parse(R"("vlm-s")");
  REQUIRE(vlm.modules.size() == 3);
  CHECK(vlm.multimodal());
  CHECK(vlm.layers() == 63 + 32);
  CHECK(vlm.first_layer(2) == 63);
  const ModuleSpec& projector = vlm.modules[1];
  REQUIRE(projector.projector);
  CHECK(projector.inputs == std::vector<std::size_t>{0});
  CHECK(projector.projector->input_width == 1792);   // ViT 5B's hidden size
  CHECK(projector.projector->output_width == 4096);  // Llama 3 8B's
  CHECK(projector.tokens == TokenSource::images);
  CHECK(projector.tokens_per_image == 169);
  CHECK(vlm.modules[2].inputs == std::vector<std::size_t>{1});
  CHECK(vlm.modules[2].tokens == TokenSource::text);
}

TEST_CASE("trainable upstream follows the inputs, not the order of the list", "[workload][multimodal]") {
  const MultimodalSpec spec = parse(with_modules(
      kVision + R"(, {"name": "audio", "model": "vit-5b", "tokens": "images", "tokens_per_image": 64, "frozen": true,
                     "inputs": []},
                  {"name": "vision_proj", "projector": {}, "inputs": ["vision"]},
                  {"name": "audio_proj", "projector": {}, "inputs": ["audio"], "frozen": true},
                  {"name": "language", "model": "llama3-8b", "inputs": ["vision_proj", "audio_proj"],
                   "frozen": true})"));
  CHECK_FALSE(spec.trainable_upstream(0));
  CHECK_FALSE(spec.trainable_upstream(1));  // the vision encoder comes first but does not feed it
  CHECK(spec.trainable_upstream(2));
  CHECK_FALSE(spec.trainable_upstream(3));
  CHECK(spec.trainable_upstream(4));
}

TEST_CASE("module video tokens come from seconds of video", "[workload][multimodal]") {
  const MultimodalSpec t2v = parse(R"("t2v-s")");
  ShardContext base;
  base.micro_batch = 2;
  const SampleShape sample{256, 0, 8.0};
  const ShardContext text = module_context(t2v.modules[0], base, sample);
  const ShardContext video = module_context(t2v.modules[1], base, sample);
  CHECK(text.tokens() == 2 * 256);
  CHECK(video.tokens() == 2 * 8 * 4608);
  // Audio: 50 frames per second of Whisper's encoder.
  CHECK(module_context(parse(R"("alm-s")").modules[0], base, {2048, 0, 0.0, 30.0}).tokens() == 2 * 30 * 50);
  const ShardContext images = module_context(parse(R"("vlm-s")").modules[0], base, {8192, 8, 0.0});
  CHECK(images.micro_batch == 16);  // attention within each image
  CHECK(images.seq_len == 169);
}

// The attention core's forward work in the first layer of `module` for `sample`.
OpWork attention_forward(const ModuleSpec& module, const SampleShape& sample) {
  const Model network(module.model, ContextParallelAlgorithm::ring, ModelHead::features);
  for (const Step& step : network.layer_steps(module_context(module, ShardContext{}, sample), 0)) {
    if (step.attention_core) return *step.forward;
  }
  FAIL("no attention core");
  return {};
}

TEST_CASE("packed clips attend within themselves (variable-length attention)", "[workload][multimodal]") {
  const MultimodalSpec t2v = parse(R"("t2v-s")");
  const ModuleSpec& video = t2v.modules[1];
  // Clips of 2 s and 6 s packed: every token still goes through the layer once, but attention
  // costs what each clip costs alone, not what one 8 s clip would.
  const SampleShape packed{256, 0, 8.0, 0.0, 2.0 * 2.0 + 6.0 * 6.0};
  const ShardContext context = module_context(video, ShardContext{}, packed);
  CHECK(context.tokens() == 8 * 4608);
  CHECK(context.attention_span == 4608 * 40 / 8);  // (9216^2 + 27648^2) / 36864 keys per query
  const double apart = attention_forward(video, {256, 0, 2.0}).flops + attention_forward(video, {256, 0, 6.0}).flops;
  CHECK(attention_forward(video, packed).flops == Approx(apart).epsilon(1e-9));
  CHECK(attention_forward(video, {256, 0, 8.0}).flops > 1.5 * apart);
  // The same for packed audio (Whisper's encoder, 50 frames per second): 10 s and 20 s, whose
  // 833.3 keys per query round to 833.
  const MultimodalSpec alm = parse(R"("alm-s")");
  const ModuleSpec& audio = alm.modules[0];
  const double audio_apart =
      attention_forward(audio, {256, 0, 0.0, 10.0}).flops + attention_forward(audio, {256, 0, 0.0, 20.0}).flops;
  CHECK(attention_forward(audio, {256, 0, 0.0, 30.0, 0.0, 100.0 + 400.0}).flops == Approx(audio_apart).epsilon(1e-3));
}

TEST_CASE("InternVL's pixel shuffle hands the LLM a quarter of the patch tokens, four times as wide",
          "[workload][multimodal]") {
  const MultimodalSpec internvl = parse(R"("internvl2.5-qwen2.5-72b")");
  REQUIRE(internvl.modules.size() == 3);
  CHECK(internvl.modules[0].tokens_per_image == 1024);  // (448 / 14)^2 patches a tile
  const ModuleSpec& projector = internvl.modules[1];
  REQUIRE(projector.projector);
  CHECK(projector.projector->token_merge == 4);
  CHECK(projector.projector->input_width == 4 * 3200);
  CHECK(projector.projector->output_width == 8192);
  CHECK(projector.projector->norm == NormKind::layernorm);
  CHECK(projector.tokens == TokenSource::images);
  CHECK(projector.tokens_per_image == 256);
  CHECK(internvl.sequence_tokens().per_image == 256);  // InternVL's num_image_token
  // Merged video tokens: a second of 64 tokens becomes 16.
  const MultimodalSpec video = parse(with_modules(
      R"({"name": "video", "model": "vit-5b", "tokens": "video", "tokens_per_second": 64},
         {"name": "p", "projector": {"token_merge": 4}}, )" +
      kLanguage));
  CHECK(video.modules[1].tokens_per_second == 16);
  CHECK(video.modules[1].projector->input_width == 4 * 1792);
  CHECK_FALSE(video.modules[1].projector->norm);
}

TEST_CASE("LLaVA-OneVision's projector pools each video frame's 729 tokens to 196", "[workload][multimodal]") {
  const MultimodalSpec llava = parse(R"("llava-ov-llama3-8b")");
  const ModuleSpec& projector = llava.modules[1];
  CHECK(projector.tokens_per_image == 729);         // SigLIP's 27 x 27 patches
  CHECK(projector.tokens_per_frame == 196);         // bilinear at stride 2: 14 x 14
  CHECK(llava.modules[0].tokens_per_frame == 729);  // the encoder sees every frame whole
  CHECK(llava.sequence_tokens().per_image == 729);
  CHECK(llava.sequence_tokens().per_frame == 196);
  // 10 images, 6 of them frames: the encoder's tokens, and what the projector hands on.
  const SampleShape sample{.seq_len = 4224, .images = 10, .frames = 6};
  CHECK(module_tokens(llava.modules[0], sample) == 10 * 729);
  CHECK(module_tokens(projector, sample) == 4 * 729 + 6 * 196);
  // Without pooling a frame is an image.
  const MultimodalSpec plain = parse(R"("vlm-s")");
  CHECK(plain.sequence_tokens().per_frame == plain.sequence_tokens().per_image);
}

TEST_CASE("bad module graphs are refused with the JSON path", "[workload][multimodal]") {
  auto refused = [](const std::string& text, const std::string& message) {
    INFO(text);
    CHECK_THROWS_WITH(parse(text), Contains(message));
  };
  refused(with_modules(kVision + R"(, {"name": "language", "model": "llama3-8b", "inputs": ["audio"]})"),
          "model.modules[1].inputs[0]: 'audio' is not a module listed before this one");
  refused(with_modules(R"({"name": "p", "projector": {}}, )" + kLanguage), "a projector reads exactly one module");
  refused(with_modules(kVision + R"(, {"name": "p", "projector": {}})"), "cannot be a projector");
  refused(with_modules(kVision + ", " + kVision), "'vision' names two modules");
  refused(with_modules(kVision + R"(, {"name": "x", "model": "vit-5b", "tokens": "images", "tokens_per_image": 4,
                                      "inputs": []}, )" +
                       kLanguage),
          "model.modules[0]: module 'vision' is read by no later module");
  refused(with_modules(R"({"name": "vision", "model": "vit-5b", "tokens": "images"}, )" + kLanguage),
          "model.modules[0]: missing required field 'tokens_per_image'");
  refused(with_modules(kVision + R"(, {"name": "p", "projector": {}, "model": "vit-5b"}, )" + kLanguage),
          "expected exactly one of 'model' (a transformer) and 'projector'");
  refused(with_modules(kVision + R"(, {"name": "p", "projector": {}, "tokens": "text"}, )" + kLanguage),
          "a projector has the tokens of the module it reads");
  refused(with_modules(kVision + R"(, {"name": "p", "projector": {}}, {"name": "q", "projector": {}}, )" + kLanguage),
          "a projector cannot read another projector");
  refused(with_modules(kVision + R"(, {"name": "language", "model": "llama3-8b", "tokens_per_second": 5})"),
          "model.modules[1].tokens_per_second: only video and audio tokens have it");
  refused(with_modules(kLanguage), "expected at least two modules");
  refused(with_modules(kVision + R"(, {"name": "p", "projector": {"token_merge": 4}}, )" + kLanguage),
          "model.modules[1].projector.token_merge: expected a divisor of 'vision' tokens_per_image 169, got 4");
  refused(with_modules(kLanguage + R"(, {"name": "p", "projector": {"token_merge": 2}}, )" +
                       R"({"name": "l2", "model": "llama3-8b"})"),
          "model.modules[1].projector.token_merge: only image, video or audio tokens can be merged");
  refused(with_modules(kVision + R"(, {"name": "p", "projector": {"token_merge": 0}}, )" + kLanguage),
          "model.modules[1].projector.token_merge");
  refused(with_modules(kVision + R"(, {"name": "p", "projector": {"norm": "batchnorm"}}, )" + kLanguage),
          "model.modules[1].projector.norm");
  refused(with_modules(kVision + R"(, {"name": "p", "projector": {"tokens_per_frame": 170}}, )" + kLanguage),
          "model.modules[1].projector.tokens_per_frame: expected at most the 169 tokens a frame has before pooling");
  refused(with_modules(kVision + R"(, {"name": "p", "projector": {"tokens_per_frame": 0}}, )" + kLanguage),
          "model.modules[1].projector.tokens_per_frame");
  refused(with_modules(R"({"name": "video", "model": "vit-5b", "tokens": "video", "tokens_per_second": 64},
                          {"name": "p", "projector": {"tokens_per_frame": 16}}, )" +
                       kLanguage),
          "model.modules[1].projector.tokens_per_frame: only an image module's video frames are pooled; 'video' has no "
          "images");
  refused(with_modules(kVision + R"(, {"name": "p", "projector": {"merge": 4}}, )" + kLanguage),
          "model.modules[1].projector.merge: unknown field (expected one of: ffn_hidden, token_merge, norm, "
          "tokens_per_frame)");
}

}  // namespace
}  // namespace weft
