#pragma once

#include <cstdint>
#include <istream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "simulator/workload/data/dataset_spec.hpp"
#include "simulator/workload/data/sample_shape.hpp"

namespace weft {

// The samples of a samples file, read once and shared by every copy of the data section that
// holds them (a sweep copies its scenario into each plan it enumerates).
class SampleList {
 public:
  SampleList() = default;
  explicit SampleList(std::vector<SampleContents> samples)
      : samples_(std::make_shared<const std::vector<SampleContents>>(std::move(samples))) {}

  bool empty() const { return size() == 0; }
  std::size_t size() const { return samples_ ? samples_->size() : 0; }
  const SampleContents& operator[](std::size_t i) const { return (*samples_)[i]; }

 private:
  std::shared_ptr<const std::vector<SampleContents>> samples_;
};

// Where an iteration's samples come from (a scenario's "data" section): each DP replica draws
// its own samples, so replicas differ and are simulated one by one.
struct DataSpec {
  std::optional<DatasetSpec> dataset;  // samples drawn from a mixture, or
  std::string samples_file;            // samples read from a JSON Lines file:
  SampleList samples;                  // its samples, in order
  std::uint64_t seed = 0;
  // A microbatch is padded to its longest sample rounded up to a multiple of this, as
  // dynamic padding does (kernels tile sequences; tensor and context parallelism split them).
  std::int64_t pad_to = 128;
  // Samples are packed, in order, into sequences of at most the context length; a microbatch is
  // one such sequence.
  bool pack = false;
  // With packing, the most samples one sequence takes (PipeWeaver packs up to 8 video clips
  // into a microbatch, papers/001 §8.1); 0: as many as fit.
  std::int64_t max_samples = 0;
};

// {"dataset": <name or object>, "seed": 7, "pad_to": 128, "pack": false}, or
// {"samples": "file.jsonl", ...} where each line of the file is a sample:
// {"text_tokens": 1234, "images": 2, "frames": 16, "video_seconds": 4.5, "audio_seconds": 30} (all
// but the text optional).
DataSpec load_data_spec(const JsonCursor& json);

// The samples of a JSON Lines file; errors name the file and line. A file whose samples would
// take more than half of this machine's memory is refused before it is read.
std::vector<SampleContents> read_samples_file(const std::string& file);
// The same from a stream; `file` names it in errors.
std::vector<SampleContents> read_samples(std::istream& in, const std::string& file);

// The shape of every microbatch of every DP replica, as simulated, and what they hold.
struct MicrobatchShapes {
  int replicas = 0;
  int microbatches = 0;
  std::vector<SampleShape> shapes;  // replica-major; the sequence padded
  // Per microbatch, what its samples hold before padding: their sequence tokens summed (not per
  // sample, as in `shapes`), images, video and audio.
  std::vector<SampleShape> own;
  std::int64_t samples = 0;  // samples taken (several per microbatch when packing)

  const SampleShape& at(int replica, int microbatch) const {
    return shapes[static_cast<std::size_t>(replica) * static_cast<std::size_t>(microbatches) +
                  static_cast<std::size_t>(microbatch)];
  }
  // The shapes that occur, ascending.
  std::vector<SampleShape> distinct() const;
  // What every microbatch's samples hold together before padding (`own` summed).
  SampleShape total() const;
};

// Takes the samples of each microbatch of each replica in order (sample i of the iteration is
// the file's sample i, or drawn from its own random stream): `micro_batch` samples, or with
// packing as many as fit in the context (the last sequence also ends with a samples file). A
// sample's sequence is its text tokens and `tokens` per image and per video frame, truncated to the
// context length `context` (as many whole images as fit, then whole frames, then text); the
// microbatch's sequence is padded (the context must be a multiple of pad_to). Per microbatch,
// images, frames, video and audio add up over its samples (a microbatch of media holds one sample
// or one packed sequence). Deterministic for a seed; a samples file too short for the
// iteration is an InputError.
MicrobatchShapes draw_microbatch_shapes(const DataSpec& data, int replicas, int microbatches, std::int64_t micro_batch,
                                        std::int64_t context, const SequenceTokens& tokens);

// Samples [first, first + count) of an iteration, each as its sequence holds it within `context`
// (whole images first, then frames, then text; not padded): the samples draw_microbatch_shapes takes, in order,
// without packing. InputError when a samples file is too short.
std::vector<SampleShape> draw_sample_shapes(const DataSpec& data, std::uint64_t first, std::uint64_t count,
                                            std::int64_t context, const SequenceTokens& tokens);

// `count` samples drawn at random from the data, as a profiler draws batches from a dataset:
// from a dataset's mixture (its stream from sample 2^40 + 2^32 x `batch`, past any iteration's),
// or uniformly, with replacement, from a samples file (seeded by `batch`). Shaped as
// draw_sample_shapes does.
std::vector<SampleShape> profiling_sample_shapes(const DataSpec& data, std::uint64_t batch, std::uint64_t count,
                                                 std::int64_t context, const SequenceTokens& tokens);

}  // namespace weft
