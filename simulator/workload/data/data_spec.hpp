#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "simulator/workload/data/dataset_spec.hpp"

namespace weft {

// Where an iteration's samples come from (a scenario's "data" section): each DP replica draws
// its own samples, so replicas differ and are simulated one by one.
struct DataSpec {
  std::optional<DatasetSpec> dataset;  // samples drawn from a mixture, or
  std::string samples_file;            // samples read from a JSON Lines file:
  std::vector<std::int64_t> samples;   // its samples' text tokens, in order
  std::uint64_t seed = 0;
  // A microbatch is padded to its longest sample rounded up to a multiple of this, as
  // dynamic padding does (kernels tile sequences; tensor and context parallelism split them).
  std::int64_t pad_to = 128;
};

// {"dataset": <name or object>, "seed": 7, "pad_to": 128}, or {"samples": "file.jsonl", ...}
// where each line of the file is a sample: {"text_tokens": 1234}.
DataSpec load_data_spec(const JsonCursor& json);

// The samples of a JSON Lines file; errors name the file and line.
std::vector<std::int64_t> read_samples_file(const std::string& file);

// Tokens per sample of every microbatch of every DP replica, as simulated.
struct MicrobatchLengths {
  int replicas = 0;
  int microbatches = 0;
  std::vector<std::int64_t> tokens;  // replica-major
  std::int64_t sample_tokens = 0;    // every sample's tokens before padding, summed

  std::int64_t at(int replica, int microbatch) const {
    return tokens[static_cast<std::size_t>(replica) * static_cast<std::size_t>(microbatches) +
                  static_cast<std::size_t>(microbatch)];
  }
  // The lengths that occur, ascending.
  std::vector<std::int64_t> distinct() const;
};

// Takes `micro_batch` samples for each microbatch of each replica (sample i of the iteration is
// the file's sample i, or drawn from its own random stream), truncates each to the context length `context` and pads
// the microbatch (the context must be a multiple of pad_to). Deterministic for a seed.
MicrobatchLengths draw_microbatch_lengths(const DataSpec& data, int replicas, int microbatches,
                                          std::int64_t micro_batch, std::int64_t context);

}  // namespace weft
