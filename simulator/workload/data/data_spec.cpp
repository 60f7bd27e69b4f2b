#include "simulator/workload/data/data_spec.hpp"

#include <algorithm>
#include <string>

namespace weft {

DataSpec load_data_spec(const JsonCursor& json) {
  json.expect_only({"dataset", "seed", "pad_to"});
  DataSpec data;
  data.dataset = load_dataset_spec(json.at("dataset"));
  if (auto value = json.find("seed")) data.seed = static_cast<std::uint64_t>(value->as_nonnegative_int());
  if (auto value = json.find("pad_to")) {
    data.pad_to = value->as_positive_int();
    if (data.pad_to > (std::int64_t{1} << 24)) value->fail("expected at most 16777216 tokens");
  }
  return data;
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
  std::uint64_t sample = 0;
  for (int replica = 0; replica < replicas; ++replica) {
    for (int mb = 0; mb < microbatches; ++mb) {
      std::int64_t longest = 0;
      for (std::int64_t k = 0; k < micro_batch; ++k, ++sample) {
        SampleRandom random(data.seed, sample);
        const SampleSource& source = data.dataset.pick(random);
        const std::int64_t tokens = std::min(source.text_tokens.draw(random), context);
        lengths.sample_tokens += tokens;
        longest = std::max(longest, tokens);
      }
      lengths.tokens.push_back((longest + data.pad_to - 1) / data.pad_to * data.pad_to);
    }
  }
  return lengths;
}

}  // namespace weft
