#include "simulator/workload/data/dataset_spec.hpp"

#include "simulator/core/spec_resolver.hpp"

namespace weft {
namespace {

DatasetSpec parse_dataset_spec(const JsonCursor& json) {
  json.expect_only({"name", "description", "source", "mixture"});
  DatasetSpec spec;
  spec.name = json.find("name") ? json.at("name").as_string() : "inline";
  if (auto value = json.find("description")) spec.description = value->as_string();
  const JsonCursor mixture = json.at("mixture");
  for (const JsonCursor& entry : mixture.elements()) {
    entry.expect_only({"name", "weight", "text_tokens", "images", "frames", "video_seconds", "audio_seconds"});
    SampleSource source;
    source.name = entry.find("name") ? entry.at("name").as_string() : "samples";
    source.weight = entry.find("weight") ? entry.at("weight").as_positive_number() : 1.0;
    source.text_tokens = load_length_distribution(entry.at("text_tokens"));
    if (auto value = entry.find("images")) source.images = load_length_distribution(*value, true);
    if (auto value = entry.find("frames")) source.frames = load_length_distribution(*value, true);
    if (auto value = entry.find("video_seconds")) source.video_seconds = load_length_distribution(*value, true);
    if (auto value = entry.find("audio_seconds")) source.audio_seconds = load_length_distribution(*value, true);
    spec.mixture.push_back(std::move(source));
  }
  if (spec.mixture.empty()) mixture.fail("expected at least one sample source");
  return spec;
}

}  // namespace

const SampleSource& DatasetSpec::pick(SampleRandom& random) const {
  double total = 0.0;
  for (const SampleSource& source : mixture) total += source.weight;
  double left = random.uniform() * total;
  for (const SampleSource& source : mixture) {
    if (left < source.weight) return source;
    left -= source.weight;
  }
  return mixture.back();  // rounding at the top end
}

DatasetSpec load_dataset_spec(const JsonCursor& json) {
  return load_spec<DatasetSpec>(json, "datasets", "dataset", parse_dataset_spec);
}

}  // namespace weft
