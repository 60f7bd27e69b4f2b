#include "simulator/workload/data/data_spec.hpp"

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include "tests/support/run_command.hpp"

namespace weft {
namespace {

using Catch::Matchers::Contains;

DataSpec data_from(const std::string& text) {
  const JsonDocument document = JsonDocument::parse_text(text, "scenario.json");
  return load_data_spec(document.root());
}

// The padded sequence length of every microbatch, and the lengths that occur.
std::vector<std::int64_t> lengths_of(const MicrobatchShapes& shapes) {
  std::vector<std::int64_t> out;
  for (const SampleShape& shape : shapes.shapes) out.push_back(shape.seq_len);
  return out;
}
std::vector<std::int64_t> distinct_lengths(const MicrobatchShapes& shapes) {
  std::vector<std::int64_t> out;
  for (const SampleShape& shape : shapes.distinct()) out.push_back(shape.seq_len);
  return out;
}

MicrobatchShapes draw(const DataSpec& data, int replicas, int microbatches, std::int64_t micro_batch,
                      std::int64_t context, std::int64_t tokens_per_image = 0, std::int64_t tokens_per_frame = 0) {
  return draw_microbatch_shapes(data, replicas, microbatches, micro_batch, context,
                                {tokens_per_image, tokens_per_frame});
}

// Two sources of fixed lengths, drawn with the given weights.
std::string two_sources(double short_weight, double long_weight) {
  return fmt::format(R"({{"dataset": {{"mixture": [
      {{"weight": {}, "text_tokens": {{"distribution": "fixed", "value": 100}}}},
      {{"weight": {}, "text_tokens": {{"distribution": "fixed", "value": 5000}}}}]}}, "seed": 9}})",
                     short_weight, long_weight);
}

TEST_CASE("microbatches are padded to their longest sample, rounded up to pad_to", "[data]") {
  const DataSpec data = data_from(two_sources(1, 1));
  // One sample per microbatch: 100 -> 128, 5000 -> 5120, each half the time.
  const std::vector<std::int64_t> single = lengths_of(draw(data, 4, 5'000, 1, 8192));
  CHECK(distinct_lengths(draw(data, 4, 5'000, 1, 8192)) == std::vector<std::int64_t>{128, 5120});
  const auto longs = std::count(single.begin(), single.end(), 5120);
  CHECK(std::abs(static_cast<double>(longs) / 20'000 - 0.5) < 0.02);
  // Two samples: the microbatch is short only if both are (probability 1/4).
  const std::vector<std::int64_t> pairs = lengths_of(draw(data, 4, 5'000, 2, 8192));
  const auto shorts = std::count(pairs.begin(), pairs.end(), 128);
  CHECK(std::abs(static_cast<double>(shorts) / 20'000 - 0.25) < 0.02);
  // Truncated to the context: 5000 tokens in a 4096-token context.
  CHECK(distinct_lengths(draw(data, 1, 1'000, 1, 4096)) == std::vector<std::int64_t>{128, 4096});
}

TEST_CASE("mixture weights set how often each source is drawn", "[data]") {
  const MicrobatchShapes shapes = draw(data_from(two_sources(3, 1)), 1, 40'000, 1, 8192);
  const std::vector<std::int64_t> lengths = lengths_of(shapes);
  const auto longs = std::count(lengths.begin(), lengths.end(), 5120);
  CHECK(std::abs(static_cast<double>(longs) / 40'000 - 0.25) < 0.01);
  // Tokens before padding: 100 per short sample, 5000 per long one.
  CHECK(shapes.total().seq_len == (40'000 - longs) * 100 + longs * 5000);
  CHECK(shapes.samples == 40'000);
}

TEST_CASE("draws are reproducible for a seed and differ between seeds and replicas", "[data]") {
  const DataSpec data = data_from(R"({"dataset": "web-text-mix", "seed": 1})");
  const std::vector<std::int64_t> a = lengths_of(draw(data, 8, 64, 1, 8192));
  CHECK(lengths_of(draw(data, 8, 64, 1, 8192)) == a);
  DataSpec reseeded = data;
  reseeded.seed = 2;
  CHECK(lengths_of(draw(reseeded, 8, 64, 1, 8192)) != a);
  const std::vector<std::int64_t> first(a.begin(), a.begin() + 64);
  const std::vector<std::int64_t> second(a.begin() + 64, a.begin() + 128);
  CHECK(first != second);
  for (std::int64_t tokens : a) {
    CHECK(tokens % 128 == 0);
    CHECK(tokens >= 128);
    CHECK(tokens <= 8192);
  }
}

TEST_CASE("samples can be read from a JSON Lines file, in order", "[data]") {
  const test::TempDir dir;
  const auto file = dir.write("samples.jsonl",
                              "{\"text_tokens\": 300}\n\n{\"text_tokens\": 1000}\n"
                              "{\"text_tokens\": 20}\n{\"text_tokens\": 9000}\n");
  const DataSpec data = data_from(fmt::format(R"({{"samples": "{}", "pad_to": 256}})", file.string()));
  REQUIRE(data.samples.size() == 4);
  CHECK(data.samples[3].text_tokens == 9000);
  // A copy (a sweep's plan) shares the samples read, rather than holding its own.
  const DataSpec copy = data;  // NOLINT(performance-unnecessary-copy-initialization)
  CHECK(&copy.samples[0] == &data.samples[0]);
  const MicrobatchShapes shapes = draw(data, 2, 1, 2, 8192);
  CHECK(lengths_of(shapes) == std::vector<std::int64_t>{1024, 8192});
  CHECK(shapes.total().seq_len == 300 + 1000 + 20 + 8192);
}

TEST_CASE("images add their tokens to the sequence, whole, within the context", "[data]") {
  const test::TempDir dir;
  const auto file = dir.write("samples.jsonl",
                              "{\"text_tokens\": 100, \"images\": 2}\n"
                              "{\"text_tokens\": 50, \"images\": 30}\n"
                              "{\"text_tokens\": 40, \"video_seconds\": 2.5}\n"
                              "{\"text_tokens\": 30, \"audio_seconds\": 12}\n");
  const DataSpec data = data_from(fmt::format(R"({{"samples": "{}", "pad_to": 64}})", file.string()));
  const MicrobatchShapes shapes = draw(data, 1, 4, 1, 1024, 100);
  // 100 + 2 x 100 = 300 tokens, padded to 320; 30 images do not fit in 1024 tokens: 10 whole
  // images and 24 of the text tokens; no images in the third.
  REQUIRE(shapes.shapes.size() == 4);
  CHECK(shapes.shapes[0] == SampleShape{320, 2, 0.0});
  CHECK(shapes.shapes[1] == SampleShape{1024, 10, 0.0});
  CHECK(shapes.shapes[2] == SampleShape{64, 0, 2.5});
  CHECK(shapes.shapes[3] == SampleShape{64, 0, 0.0, 12.0});
  CHECK(shapes.total().audio_seconds == 12.0);
  CHECK(shapes.own[0].seq_len == 300);
  CHECK(shapes.total().images == 12);
  CHECK(shapes.total().video_seconds == 2.5);
  CHECK(shapes.total().seq_len == 300 + 1024 + 40 + 30);
}

TEST_CASE("video frames are images to the encoder and take their pooled tokens in the sequence", "[data]") {
  // 100 tokens per image, 25 per frame (a projector's pooling), a context of 1024.
  const test::TempDir dir;
  const auto file = dir.write("samples.jsonl",
                              "{\"text_tokens\": 100, \"images\": 2, \"frames\": 8}\n"
                              "{\"text_tokens\": 50, \"images\": 9, \"frames\": 20}\n"
                              "{\"text_tokens\": 40, \"frames\": 100}\n");
  const DataSpec data = data_from(fmt::format(R"({{"samples": "{}", "pad_to": 64}})", file.string()));
  CHECK(data.samples[0].frames == 8);
  const MicrobatchShapes shapes = draw(data, 1, 3, 1, 1024, 100, 25);
  REQUIRE(shapes.shapes.size() == 3);
  // 100 + 2 x 100 + 8 x 25 = 500 tokens, padded to 512: 10 encoder inputs, 8 of them frames.
  CHECK(shapes.shapes[0] == SampleShape{.seq_len = 512, .images = 10, .frames = 8});
  CHECK(shapes.own[0].seq_len == 500);
  // 9 images take 900 tokens; the 124 left hold 4 whole frames, then 24 of the text tokens.
  CHECK(shapes.shapes[1] == SampleShape{.seq_len = 1024, .images = 13, .frames = 4});
  // 100 frames take 2500 tokens: 40 whole ones fill the context.
  CHECK(shapes.shapes[2] == SampleShape{.seq_len = 1024, .images = 40, .frames = 40});
  CHECK(shapes.total().images == 10 + 13 + 40);
  CHECK(shapes.total().frames == 8 + 4 + 40);
  // A dataset's frames, drawn per source after its other counts.
  const DataSpec drawn = data_from(R"({"dataset": {"mixture": [{"text_tokens": {"distribution": "fixed", "value": 30},
      "images": {"distribution": "fixed", "value": 1}, "frames": {"distribution": "fixed", "value": 16}}]}})");
  CHECK(draw(drawn, 1, 1, 1, 4096, 729, 196).own[0] ==
        SampleShape{.seq_len = 30 + 729 + 16 * 196, .images = 17, .frames = 16});
}

TEST_CASE("packing fills each sequence with the samples that fit, in order", "[data]") {
  const test::TempDir dir;
  // Sequences of at most 1000 tokens: [300, 500] (the next, 400, does not fit), [400, 100, 200,
  // 300] exactly full, [700] (the next does not fit), [1000 of a 1200-token sample], then [5] as
  // the file ends.
  std::string lines;
  for (int tokens : {300, 500, 400, 100, 200, 300, 700, 1200, 5})
    lines += fmt::format("{{\"text_tokens\": {}}}\n", tokens);
  const auto file = dir.write("samples.jsonl", lines);
  const DataSpec data = data_from(fmt::format(R"({{"samples": "{}", "pad_to": 100, "pack": true}})", file.string()));
  const MicrobatchShapes shapes = draw(data, 2, 2, 1, 1000);
  CHECK(lengths_of(shapes) == std::vector<std::int64_t>{800, 1000, 700, 1000});
  CHECK(shapes.samples == 8);
  CHECK(shapes.total().seq_len == 800 + 1000 + 700 + 1000);
  CHECK(lengths_of(draw(data, 1, 5, 1, 1000)).back() == 100);
  // A sixth sequence needs more samples than the file holds.
  CHECK_THROWS_WITH(draw(data, 2, 3, 1, 1000), Contains("holds 9 samples; the iteration takes more"));
}

TEST_CASE("packing takes at most max_samples, and keeps the clips' squared seconds", "[data]") {
  const test::TempDir dir;
  // Captions of 50 tokens with clips of 2, 4, 3, 6, 1 s: at most 3 per sequence gives [2, 4, 3]
  // and [6, 1]; the text context (1000) would take all five.
  std::string lines;
  for (double seconds : {2.0, 4.0, 3.0, 6.0, 1.0})
    lines += fmt::format("{{\"text_tokens\": 50, \"video_seconds\": {}}}\n", seconds);
  const auto file = dir.write("clips.jsonl", lines);
  const DataSpec data =
      data_from(fmt::format(R"({{"samples": "{}", "pad_to": 50, "pack": true, "max_samples": 3}})", file.string()));
  const MicrobatchShapes shapes = draw(data, 1, 2, 1, 1000);
  REQUIRE(shapes.own.size() == 2);
  CHECK(shapes.own[0].seq_len == 150);
  CHECK(shapes.own[0].video_seconds == 9.0);
  CHECK(shapes.own[0].video_square_seconds == 4.0 + 16.0 + 9.0);
  CHECK(shapes.own[1].video_seconds == 7.0);
  CHECK(shapes.own[1].video_square_seconds == 36.0 + 1.0);
  CHECK(shapes.samples == 5);
  // One clip per sequence is one clip: no squares, as without packing.
  const DataSpec one =
      data_from(fmt::format(R"({{"samples": "{}", "pad_to": 50, "pack": true, "max_samples": 1}})", file.string()));
  const MicrobatchShapes single = draw(one, 1, 2, 1, 1000);
  CHECK(single.own[1].video_seconds == 4.0);
  CHECK(single.own[1].video_square_seconds == 0.0);
  CHECK_THROWS_WITH(data_from(R"({"dataset": "video-clips", "max_samples": 8})"),
                    Contains("max_samples: applies to packed sequences"));
  CHECK_THROWS_WITH(data_from(R"({"dataset": "video-clips", "pack": true, "max_samples": 0})"),
                    Contains("max_samples: expected an integer > 0"));
}

TEST_CASE("datasets draw images and seconds of video per source", "[data]") {
  const DataSpec data = data_from(R"({"dataset": {"mixture": [
      {"name": "captions", "text_tokens": {"distribution": "fixed", "value": 30},
       "images": {"distribution": "fixed", "value": 1}},
      {"name": "clips", "text_tokens": {"distribution": "fixed", "value": 80},
       "video_seconds": {"distribution": "uniform", "min": 2, "max": 16}}]}, "seed": 3})");
  const MicrobatchShapes shapes = draw(data, 1, 4'000, 1, 4096, 169);
  std::int64_t captions = 0;
  for (const SampleShape& own : shapes.own) {
    if (own.images == 1) {
      ++captions;
      CHECK(own.seq_len == 30 + 169);
      CHECK(own.video_seconds == 0.0);
    } else {
      CHECK(own.seq_len == 80);
      CHECK(own.video_seconds >= 2.0);
      CHECK(own.video_seconds <= 16.0);
    }
  }
  CHECK(std::abs(static_cast<double>(captions) / 4'000 - 0.5) < 0.03);
  // Uniform whole seconds in [2, 16]: mean 9.
  CHECK(shapes.total().video_seconds / static_cast<double>(4'000 - captions) == Approx(9.0).epsilon(0.03));
}

TEST_CASE("bad data sections and sample files are clear errors", "[data][errors]") {
  const test::TempDir dir;
  CHECK_THROWS_WITH(data_from(R"({"seed": 1})"), Contains("either \"dataset\" or \"samples\""));
  CHECK_THROWS_WITH(data_from(R"({"dataset": "no-such-dataset"})"), Contains("no-such-dataset"));
  CHECK_THROWS_WITH(data_from(R"({"dataset": {"mixture": []}})"), Contains("mixture") && Contains("at least one"));
  CHECK_THROWS_WITH(data_from(R"({"dataset": "web-text-mix", "pad_to": 0})"), Contains("pad_to"));
  const auto empty = dir.write("empty.jsonl", "\n");
  CHECK_THROWS_WITH(data_from(fmt::format(R"({{"samples": "{}"}})", empty.string())), Contains("holds no samples"));
  const auto bad = dir.write("bad.jsonl", "{\"text_tokens\": 10}\n{\"text_tokens\": -3}\n");
  CHECK_THROWS_WITH(data_from(fmt::format(R"({{"samples": "{}"}})", bad.string())),
                    Contains("bad.jsonl:2") && Contains("text_tokens"));
  const auto broken = dir.write("broken.jsonl", "{\"text_tokens\": 10\n");
  CHECK_THROWS_WITH(data_from(fmt::format(R"({{"samples": "{}"}})", broken.string())), Contains("broken.jsonl:1"));
  const auto good = dir.write("good.jsonl", "{\"text_tokens\": 10}\n");
  CHECK_THROWS_WITH(data_from(fmt::format(R"({{"samples": "{}", "seed": 3}})", good.string())),
                    Contains("seed") && Contains("drawn from a dataset"));
  CHECK_THROWS_WITH(data_from(fmt::format(R"({{"samples": "{}", "dataset": "web-text-mix"}})", good.string())),
                    Contains("either"));
  CHECK_THROWS_WITH(data_from(R"({"samples": "/no/such/file.jsonl"})"), Contains("cannot open"));
  const auto negative = dir.write("frames.jsonl", "{\"text_tokens\": 10, \"frames\": -1}\n");
  CHECK_THROWS_WITH(data_from(fmt::format(R"({{"samples": "{}"}})", negative.string())),
                    Contains("frames.jsonl:1") && Contains("frames"));
}

}  // namespace
}  // namespace weft
