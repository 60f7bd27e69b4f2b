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
  const MicrobatchLengths single = draw_microbatch_lengths(data, 4, 5'000, 1, 8192);
  CHECK(single.distinct() == std::vector<std::int64_t>{128, 5120});
  const auto longs = std::count(single.tokens.begin(), single.tokens.end(), 5120);
  CHECK(std::abs(static_cast<double>(longs) / 20'000 - 0.5) < 0.02);
  // Two samples: the microbatch is short only if both are (probability 1/4).
  const MicrobatchLengths pairs = draw_microbatch_lengths(data, 4, 5'000, 2, 8192);
  const auto shorts = std::count(pairs.tokens.begin(), pairs.tokens.end(), 128);
  CHECK(std::abs(static_cast<double>(shorts) / 20'000 - 0.25) < 0.02);
  // Truncated to the context: 5000 tokens in a 4096-token context.
  CHECK(draw_microbatch_lengths(data, 1, 1'000, 1, 4096).distinct() == std::vector<std::int64_t>{128, 4096});
}

TEST_CASE("mixture weights set how often each source is drawn", "[data]") {
  const MicrobatchLengths lengths = draw_microbatch_lengths(data_from(two_sources(3, 1)), 1, 40'000, 1, 8192);
  const auto longs = std::count(lengths.tokens.begin(), lengths.tokens.end(), 5120);
  CHECK(std::abs(static_cast<double>(longs) / 40'000 - 0.25) < 0.01);
  // Tokens before padding: 100 per short sample, 5000 per long one.
  CHECK(lengths.sample_tokens == (40'000 - longs) * 100 + longs * 5000);
}

TEST_CASE("draws are reproducible for a seed and differ between seeds and replicas", "[data]") {
  const DataSpec data = data_from(R"({"dataset": "web-text-mix", "seed": 1})");
  const MicrobatchLengths a = draw_microbatch_lengths(data, 8, 64, 1, 8192);
  const MicrobatchLengths b = draw_microbatch_lengths(data, 8, 64, 1, 8192);
  CHECK(a.tokens == b.tokens);
  DataSpec reseeded = data;
  reseeded.seed = 2;
  CHECK(draw_microbatch_lengths(reseeded, 8, 64, 1, 8192).tokens != a.tokens);
  const std::vector<std::int64_t> first(a.tokens.begin(), a.tokens.begin() + 64);
  const std::vector<std::int64_t> second(a.tokens.begin() + 64, a.tokens.begin() + 128);
  CHECK(first != second);
  for (std::int64_t tokens : a.tokens) {
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
  CHECK(data.samples == std::vector<std::int64_t>{300, 1000, 20, 9000});
  const MicrobatchLengths lengths = draw_microbatch_lengths(data, 2, 1, 2, 8192);
  CHECK(lengths.tokens == std::vector<std::int64_t>{1024, 8192});
  CHECK(lengths.sample_tokens == 300 + 1000 + 20 + 8192);
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
}

}  // namespace
}  // namespace weft
