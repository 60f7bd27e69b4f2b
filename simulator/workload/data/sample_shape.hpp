#pragma once

#include <compare>
#include <cstdint>

namespace weft {

// What one sample holds: its text tokens (a VLM's image tokens aside), images and seconds of video
// and audio.
struct SampleContents {
  std::int64_t text_tokens = 0;
  std::int64_t images = 0;
  double video_seconds = 0.0;
  double audio_seconds = 0.0;
};

// What each sample of a microbatch holds, as its modules see it: the text sequence (a VLM's whole
// sequence, image tokens included, padded), the images, the video and the audio. With per-sample
// data and packing, a "sample" is one packed sequence.
struct SampleShape {
  std::int64_t seq_len = 0;
  std::int64_t images = 0;
  double video_seconds = 0.0;
  double audio_seconds = 0.0;
  // When a packed sequence holds several video (audio) clips, each attends within itself
  // (variable-length attention): the sum of every clip's seconds squared. 0: one clip.
  double video_square_seconds = 0.0;
  double audio_square_seconds = 0.0;

  auto operator<=>(const SampleShape&) const = default;
};

}  // namespace weft
