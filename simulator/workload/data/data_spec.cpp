#include "simulator/workload/data/data_spec.hpp"

#include <algorithm>
#include <fstream>
#include <optional>
#include <string>
#include <utility>

namespace weft {
namespace {

// Sample `index` of an iteration.
SampleContents sample_contents(const DataSpec& data, std::uint64_t index) {
  if (!data.samples.empty()) {
    if (index >= data.samples.size()) {
      throw InputError("data.samples: " + data.samples_file + " holds " + std::to_string(data.samples.size()) +
                       " samples; the iteration takes more");
    }
    return data.samples[index];
  }
  SampleRandom random(data.seed, index);
  const SampleSource& source = data.dataset->pick(random);
  SampleContents sample;
  sample.text_tokens = source.text_tokens.draw(random);
  if (source.images) sample.images = source.images->draw(random);
  if (source.video_seconds) sample.video_seconds = static_cast<double>(source.video_seconds->draw(random));
  if (source.audio_seconds) sample.audio_seconds = static_cast<double>(source.audio_seconds->draw(random));
  if (source.frames) sample.frames = source.frames->draw(random);  // last: the other draws stay as they were
  return sample;
}

// A sample as the sequence sees it within the context: as many whole images as fit, then whole
// video frames, then text.
SampleShape truncated(const SampleContents& sample, std::int64_t context, const SequenceTokens& tokens) {
  SampleShape shape;
  const std::int64_t images =
      tokens.per_image > 0 ? std::min(sample.images, context / tokens.per_image) : sample.images;
  const std::int64_t left = context - images * tokens.per_image;
  shape.frames = tokens.per_frame > 0 ? std::min(sample.frames, left / tokens.per_frame) : sample.frames;
  shape.images = images + shape.frames;
  shape.seq_len = std::min(sample.text_tokens + tokens.of(shape.images, shape.frames), context);
  shape.video_seconds = sample.video_seconds;
  shape.audio_seconds = sample.audio_seconds;
  return shape;
}

}  // namespace

DataSpec load_data_spec(const JsonCursor& json) {
  json.expect_only({"dataset", "samples", "seed", "pad_to", "pack", "max_samples"});
  DataSpec data;
  const auto dataset = json.find("dataset");
  const auto samples = json.find("samples");
  if (dataset.has_value() == samples.has_value()) json.fail("expected either \"dataset\" or \"samples\"");
  if (dataset) {
    data.dataset = load_dataset_spec(*dataset);
  } else {
    data.samples_file = samples->as_string();
    data.samples = SampleList(read_samples_file(data.samples_file));
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
  if (auto value = json.find("pack")) data.pack = value->as_bool();
  if (auto value = json.find("max_samples")) {
    if (!data.pack) value->fail("applies to packed sequences: set \"pack\": true");
    data.max_samples = value->as_positive_int();
  }
  return data;
}

// Memory per byte of a samples file: a sample takes 32 B and its shortest line 18 B, and the
// vector grows by doubling.
constexpr std::int64_t kSampleBytesPerTextByte = 4;

std::vector<SampleContents> read_samples_file(const std::string& file) {
  check_file_fits_memory(file, kSampleBytesPerTextByte);
  std::ifstream in(file);
  if (!in) throw InputError(file + ": cannot open file");
  return read_samples(in, file);
}

std::vector<SampleContents> read_samples(std::istream& in, const std::string& file) {
  std::vector<SampleContents> samples;
  std::string line;
  for (std::size_t number = 1; std::getline(in, line); ++number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string origin = file + ":" + std::to_string(number);
    try {
      const JsonDocument document = JsonDocument::parse_text(line, origin);
      const JsonCursor root = document.root();
      root.expect_only({"text_tokens", "images", "frames", "video_seconds", "audio_seconds"});
      SampleContents sample;
      const JsonCursor tokens = root.at("text_tokens");
      sample.text_tokens = tokens.as_positive_int();
      if (sample.text_tokens > kMaxLength) tokens.fail("expected at most " + std::to_string(kMaxLength));
      for (auto [key, count] : {std::pair{"images", &sample.images}, std::pair{"frames", &sample.frames}}) {
        if (auto value = root.find(key)) {
          *count = value->as_nonnegative_int();
          if (*count > kMaxLength) value->fail("expected at most " + std::to_string(kMaxLength));
        }
      }
      for (auto [key, seconds] :
           {std::pair{"video_seconds", &sample.video_seconds}, std::pair{"audio_seconds", &sample.audio_seconds}}) {
        if (auto value = root.find(key)) {
          *seconds = value->as_nonnegative_number();
          if (*seconds > 3600.0) value->fail("expected at most 3600 seconds");
        }
      }
      samples.push_back(sample);
    } catch (const InputError& error) {
      const std::string message = error.what();
      throw InputError(message.starts_with(origin) ? message : origin + ": " + message);
    }
  }
  if (in.bad()) throw InputError(file + ": cannot read file");
  return samples;
}

SampleShape MicrobatchShapes::total() const {
  SampleShape sum;
  for (const SampleShape& shape : own) add_counts(sum, shape);
  return sum;
}

std::vector<SampleShape> MicrobatchShapes::distinct() const {
  std::vector<SampleShape> sorted = shapes;
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  return sorted;
}

std::vector<SampleShape> draw_sample_shapes(const DataSpec& data, std::uint64_t first, std::uint64_t count,
                                            std::int64_t context, const SequenceTokens& tokens) {
  std::vector<SampleShape> out;
  out.reserve(count);
  for (std::uint64_t i = first; i < first + count; ++i)
    out.push_back(truncated(sample_contents(data, i), context, tokens));
  return out;
}

std::vector<SampleShape> profiling_sample_shapes(const DataSpec& data, std::uint64_t batch, std::uint64_t count,
                                                 std::int64_t context, const SequenceTokens& tokens) {
  if (data.samples.empty()) {
    constexpr std::uint64_t kProfilingStream = std::uint64_t{1} << 40;
    return draw_sample_shapes(data, kProfilingStream + (batch << 32), count, context, tokens);
  }
  std::vector<SampleShape> out;
  out.reserve(count);
  for (std::uint64_t i = 0; i < count; ++i) {
    SampleRandom random(batch, i);
    const auto index = static_cast<std::size_t>(random.uniform() * static_cast<double>(data.samples.size()));
    out.push_back(truncated(data.samples[std::min(index, data.samples.size() - 1)], context, tokens));
  }
  return out;
}

MicrobatchShapes draw_microbatch_shapes(const DataSpec& data, int replicas, int microbatches, std::int64_t micro_batch,
                                        std::int64_t context, const SequenceTokens& tokens) {
  MicrobatchShapes out;
  out.replicas = replicas;
  out.microbatches = microbatches;
  const auto count = static_cast<std::size_t>(replicas) * static_cast<std::size_t>(microbatches);
  out.shapes.reserve(count);
  out.own.reserve(count);
  std::uint64_t next = 0;
  // Only a packed microbatch looks at the sample after its last one; it starts the next.
  std::optional<SampleShape> waiting;
  auto take = [&] {
    if (waiting) return *std::exchange(waiting, std::nullopt);
    return truncated(sample_contents(data, next++), context, tokens);
  };
  for (std::size_t m = 0; m < count; ++m) {
    SampleShape own;
    std::int64_t longest = 0;
    int video_clips = 0;
    int audio_clips = 0;
    for (std::int64_t k = 0; data.pack ? data.max_samples == 0 || k < data.max_samples : k < micro_batch; ++k) {
      const bool file_ended = !data.samples.empty() && next >= data.samples.size() && !waiting;
      if (data.pack && k > 0 && file_ended) break;  // the last sequence ends with the file
      const SampleShape sample = take();
      if (data.pack && k > 0 && own.seq_len + sample.seq_len > context) {
        waiting = sample;
        break;
      }
      ++out.samples;
      own.seq_len += sample.seq_len;
      own.images += sample.images;
      own.frames += sample.frames;
      own.video_seconds += sample.video_seconds;
      own.audio_seconds += sample.audio_seconds;
      own.video_square_seconds += sample.video_seconds * sample.video_seconds;
      own.audio_square_seconds += sample.audio_seconds * sample.audio_seconds;
      video_clips += sample.video_seconds > 0.0 ? 1 : 0;
      audio_clips += sample.audio_seconds > 0.0 ? 1 : 0;
      longest = std::max(longest, sample.seq_len);
      if (data.pack && own.seq_len == context) break;
    }
    // Only a sequence of several clips attends within each (SampleShape).
    if (video_clips < 2) own.video_square_seconds = 0.0;
    if (audio_clips < 2) own.audio_square_seconds = 0.0;
    SampleShape padded = own;
    const std::int64_t sequence = data.pack ? own.seq_len : longest;
    padded.seq_len = (sequence + data.pad_to - 1) / data.pad_to * data.pad_to;
    out.shapes.push_back(padded);
    out.own.push_back(own);
  }
  return out;
}

}  // namespace weft
