#pragma once

#include <optional>
#include <string>
#include <vector>

#include "simulator/core/json_cursor.hpp"
#include "simulator/workload/data/length_distribution.hpp"

namespace weft {

// One kind of sample in a dataset mixture (web pages, image-caption pairs, video clips, ...): how
// often it is drawn, how many text tokens it has, and how many images, video frames (encoded as
// images) and seconds of video and audio.
struct SampleSource {
  std::string name;
  double weight = 1.0;
  LengthDistribution text_tokens;
  std::optional<LengthDistribution> images;         // none: no images
  std::optional<LengthDistribution> frames;         // video frames an image encoder encodes; none: no frames
  std::optional<LengthDistribution> video_seconds;  // whole seconds; none: no video
  std::optional<LengthDistribution> audio_seconds;  // whole seconds; none: no audio
};

// A training dataset as a mixture of sample sources (docs/scenarios.md, "data").
struct DatasetSpec {
  std::string name;
  std::string description;
  std::vector<SampleSource> mixture;

  // The source sample `random` is drawn from, by weight.
  const SampleSource& pick(SampleRandom& random) const;
};

// A dataset by name (scenarios/datasets/<name>.json), inline, or a library one with fields
// replaced ({"base": ..., ...}).
DatasetSpec load_dataset_spec(const JsonCursor& json);

}  // namespace weft
