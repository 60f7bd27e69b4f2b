#include "simulator/workload/data/data_spec.hpp"

#include <algorithm>
#include <fstream>
#include <stdexcept>
#include <string>

namespace weft {
namespace {

// The text tokens of sample `index` of an iteration.
std::int64_t sample_tokens(const DataSpec& data, std::uint64_t index) {
  if (!data.samples.empty()) return data.samples[index];
  SampleRandom random(data.seed, index);
  return data.dataset->pick(random).text_tokens.draw(random);
}

}  // namespace

DataSpec load_data_spec(const JsonCursor& json) {
  json.expect_only({"dataset", "samples", "seed", "pad_to"});
  DataSpec data;
  const auto dataset = json.find("dataset");
  const auto samples = json.find("samples");
  if (dataset.has_value() == samples.has_value()) json.fail("expected either \"dataset\" or \"samples\"");
  if (dataset) {
    data.dataset = load_dataset_spec(*dataset);
  } else {
    data.samples_file = samples->as_string();
    data.samples = read_samples_file(data.samples_file);
    if (data.samples.empty()) samples->fail(data.samples_file + " holds no samples");
  }
  if (auto value = json.find("seed")) {
    if (!dataset) value->fail("a seed applies to samples drawn from a dataset");
    data.seed = static_cast<std::uint64_t>(value->as_nonnegative_int());
  }
  if (auto value = json.find("pad_to")) {
    data.pad_to = value->as_positive_int();
    if (data.pad_to > (std::int64_t{1} << 24)) value->fail("expected at most 16777216 tokens");
  }
  return data;
}

std::vector<std::int64_t> read_samples_file(const std::string& file) {
  std::ifstream in(file);
  if (!in) throw InputError(file + ": cannot open file");
  std::vector<std::int64_t> samples;
  std::string line;
  for (std::size_t number = 1; std::getline(in, line); ++number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string origin = file + ":" + std::to_string(number);
    try {
      const JsonDocument sample = JsonDocument::parse_text(line, origin);
      sample.root().expect_only({"text_tokens"});
      const JsonCursor tokens = sample.root().at("text_tokens");
      samples.push_back(tokens.as_positive_int());
      if (samples.back() > kMaxLength) tokens.fail("expected at most " + std::to_string(kMaxLength));
    } catch (const InputError& error) {
      const std::string message = error.what();
      throw InputError(message.starts_with(origin) ? message : origin + ": " + message);
    }
  }
  if (in.bad()) throw InputError(file + ": cannot read file");
  return samples;
}

std::vector<std::int64_t> MicrobatchLengths::distinct() const {
  std::vector<std::int64_t> lengths = tokens;
  std::sort(lengths.begin(), lengths.end());
  lengths.erase(std::unique(lengths.begin(), lengths.end()), lengths.end());
  return lengths;
}

MicrobatchLengths draw_microbatch_lengths(const DataSpec& data, int replicas, int microbatches,
                                          std::int64_t micro_batch, std::int64_t context) {
  MicrobatchLengths lengths;
  lengths.replicas = replicas;
  lengths.microbatches = microbatches;
  lengths.tokens.reserve(static_cast<std::size_t>(replicas) * static_cast<std::size_t>(microbatches));
  if (!data.samples.empty() &&
      static_cast<std::int64_t>(data.samples.size()) < std::int64_t{replicas} * microbatches * micro_batch) {
    throw std::invalid_argument("draw_microbatch_lengths: fewer samples than the iteration takes");
  }
  std::uint64_t sample = 0;
  for (int replica = 0; replica < replicas; ++replica) {
    for (int mb = 0; mb < microbatches; ++mb) {
      std::int64_t longest = 0;
      for (std::int64_t k = 0; k < micro_batch; ++k, ++sample) {
        const std::int64_t tokens = std::min(sample_tokens(data, sample), context);
        lengths.sample_tokens += tokens;
        longest = std::max(longest, tokens);
      }
      lengths.tokens.push_back((longest + data.pad_to - 1) / data.pad_to * data.pad_to);
    }
  }
  return lengths;
}

}  // namespace weft
