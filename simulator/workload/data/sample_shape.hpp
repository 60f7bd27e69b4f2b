#pragma once

#include <compare>
#include <cstdint>

namespace weft {

// What one sample holds: its text tokens (a VLM's image tokens aside), images, video frames that
// an image encoder encodes one by one (LLaVA-OneVision's videos), and seconds of video and audio
// (for video and audio encoders).
struct SampleContents {
  std::int64_t text_tokens = 0;
  std::int64_t images = 0;
  double video_seconds = 0.0;
  double audio_seconds = 0.0;
  std::int64_t frames = 0;
};

// What each sample of a microbatch holds, as its modules see it: the text sequence (a VLM's whole
// sequence, image tokens included, padded), the images (each an input of the image encoder, video
// frames included), the video and the audio. With per-sample data and packing, a "sample" is one
// packed sequence.
struct SampleShape {
  std::int64_t seq_len = 0;
  std::int64_t images = 0;
  double video_seconds = 0.0;
  double audio_seconds = 0.0;
  // When a packed sequence holds several video (audio) clips, each attends within itself
  // (variable-length attention): the sum of every clip's seconds squared. 0: one clip.
  double video_square_seconds = 0.0;
  double audio_square_seconds = 0.0;
  // Of the images, the video frames: the sequence holds each with the tokens a projector pools it
  // to (LLaVA-OneVision's 196 of SigLIP's 729; MultimodalSpec::sequence_tokens).
  std::int64_t frames = 0;

  auto operator<=>(const SampleShape&) const = default;
};

// Adds what `part` holds to `sum`: sequence tokens, images, frames and seconds of video and audio
// (not the clips' squared seconds, which only a packed sequence's own samples give).
inline void add_counts(SampleShape& sum, const SampleShape& part) {
  sum.seq_len += part.seq_len;
  sum.images += part.images;
  sum.frames += part.frames;
  sum.video_seconds += part.video_seconds;
  sum.audio_seconds += part.audio_seconds;
}

// The tokens of the sequence that each image and each video frame take, after any projector's
// merging and pooling (MultimodalSpec::sequence_tokens).
struct SequenceTokens {
  std::int64_t per_image = 0;
  std::int64_t per_frame = 0;

  // Those of `images` encoder inputs, `frames` of them video frames.
  std::int64_t of(std::int64_t images, std::int64_t frames) const {
    return (images - frames) * per_image + frames * per_frame;
  }
};

}  // namespace weft
