#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "simulator/workload/data/sample_shape.hpp"
#include "simulator/workload/model_spec.hpp"
#include "simulator/workload/step.hpp"

namespace weft {

// What a module's tokens are, per sample: the text sequence (for a VLM's language model, the
// whole sequence with its image tokens), the patch tokens of each image (attention within one
// image), the latent tokens of the sample's video, or the frames of its audio.
enum class TokenSource : std::uint8_t { text, images, video, audio };
inline constexpr EnumNames<TokenSource, 4> kTokenSourceNames({"text", "images", "video", "audio"});

// An adapter between two modules: fc1, GeLU, fc2 from the width of what it reads to the next
// module's hidden size (LLaVA's MLP projector); a single linear layer when ffn_hidden is 0.
// With token_merge > 1 it first concatenates each group of that many neighbouring tokens into one
// (InternVL's pixel shuffle at downsample ratio 0.5 merges 2 x 2 patches: 4), so it hands the next
// module 1/token_merge of the tokens, each token_merge times as wide; with a norm, a norm over
// that width comes before fc1 (InternVL's mlp1).
struct ProjectorSpec {
  std::int64_t input_width = 0;  // after merging
  std::int64_t ffn_hidden = 0;
  std::int64_t output_width = 0;
  std::int64_t token_merge = 1;
  std::optional<NormKind> norm;
};

// One modality module: a transformer (encoder, LLM backbone, DiT) or a projector.
struct ModuleSpec {
  std::string name;
  ModelSpec model;                         // unused for a projector
  std::optional<ProjectorSpec> projector;  // set: the module is a projector
  bool frozen = false;                     // no weight gradients (papers/004 §4.2)
  std::vector<std::size_t> inputs;         // the earlier modules it reads; empty: the sample's data
  TokenSource tokens = TokenSource::text;  // a projector's are those of the module it reads
  std::int64_t tokens_per_image = 0;       // images: patch tokens per image
  std::int64_t tokens_per_frame = 0;       // images: per video frame (a projector's pooling)
  std::int64_t tokens_per_second = 0;      // video and audio: tokens per second of it

  int layers() const { return projector ? 0 : model.layers; }
  // The width of what the module hands on: its hidden size, or its head's output projection.
  std::int64_t output_width() const;
};

// A model as a DAG of modality modules (DESIGN.md, workloads), listed in the order the pipeline
// runs them: every module reads only modules before it. A plain LLM is one module, named "".
struct MultimodalSpec {
  std::string name;
  std::vector<ModuleSpec> modules;

  bool multimodal() const { return modules.size() > 1; }
  // The model of a one-module spec.
  const ModelSpec& single() const { return modules.front().model; }
  int layers() const;
  // The tokens each image and each video frame add to the text sequence: those of the image module
  // feeding the last module (through projectors), or none.
  SequenceTokens sequence_tokens() const;
  // Whether the last module (the one with the loss) ties its LM head to its embedding table.
  bool tied_embeddings() const { return !modules.back().projector && modules.back().model.tied_embeddings; }
  // The first pipeline layer (layers numbered over all modules in order) of `module`.
  int first_layer(std::size_t module) const;
  // Whether a trainable module lies upstream of `module` (through its inputs, transitively).
  bool trainable_upstream(std::size_t module) const;
};

// The tokens `module` sees in `sample` (for microbatch totals, in the whole microbatch).
std::int64_t module_tokens(const ModuleSpec& module, const SampleShape& sample);

// A sample with one of each medium, for steps whose sizes do not matter (parameters, the ops of
// a module a microbatch leaves empty).
inline constexpr SampleShape kOneOfEach{1, 1, 1.0, 1.0};

// How `module` shards one microbatch of `sample`s: `base` with the module's sequences and tokens.
ShardContext module_context(const ModuleSpec& module, const ShardContext& base, const SampleShape& sample);

// A model spec as a scenario gives it: one model (a name, inline, or with changes; see
// load_model_spec), or {"name": ..., "modules": [...]} (docs/scenarios.md).
MultimodalSpec load_multimodal_spec(const JsonCursor& json);

}  // namespace weft
