#include "simulator/workload/multimodal_spec.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>

#include "simulator/core/spec_resolver.hpp"

namespace weft {
namespace {

// The module listed (before the one being read) under the name `name_json` gives.
std::size_t module_index(const std::vector<ModuleSpec>& earlier, const JsonCursor& name_json) {
  const std::string name = name_json.as_string();
  for (std::size_t i = 0; i < earlier.size(); ++i) {
    if (earlier[i].name == name) return i;
  }
  name_json.fail("'" + name + "' is not a module listed before this one");
}

// A projector's spec and tokens: those of the module it reads, `source`, merged token_merge to one,
// each video frame's pooled to tokens_per_frame.
void read_projector(const JsonCursor& json, const ModuleSpec& source, ModuleSpec& module) {
  json.expect_only({"ffn_hidden", "token_merge", "norm", "tokens_per_frame"});
  ProjectorSpec spec;
  if (auto value = json.find("ffn_hidden")) spec.ffn_hidden = value->as_nonnegative_int();
  if (auto value = json.find("norm")) spec.norm = value->as_enum(kNormKindNames);
  module.tokens = source.tokens;
  module.tokens_per_image = source.tokens_per_image;
  module.tokens_per_second = source.tokens_per_second;
  if (auto value = json.find("token_merge")) {
    spec.token_merge = value->as_positive_int();
    if (source.tokens == TokenSource::text && spec.token_merge > 1)
      value->fail("only image, video or audio tokens can be merged; '" + source.name + "' has text tokens");
    std::int64_t& per_unit = source.tokens == TokenSource::images ? module.tokens_per_image : module.tokens_per_second;
    const char* unit = source.tokens == TokenSource::images ? "tokens_per_image" : "tokens_per_second";
    if (per_unit % spec.token_merge != 0)
      value->fail("expected a divisor of '" + source.name + "' " + unit + " " + std::to_string(per_unit) + ", got " +
                  std::to_string(spec.token_merge));
    per_unit /= spec.token_merge;
  }
  module.tokens_per_frame = module.tokens_per_image;
  if (auto value = json.find("tokens_per_frame")) {
    if (source.tokens != TokenSource::images)
      value->fail("only an image module's video frames are pooled; '" + source.name + "' has no images");
    module.tokens_per_frame = value->as_positive_int();
    if (module.tokens_per_frame > module.tokens_per_image) {
      value->fail("expected at most the " + std::to_string(module.tokens_per_image) +
                  " tokens a frame has before pooling (tokens_per_image, after token_merge)");
    }
  }
  spec.input_width = source.output_width() * spec.token_merge;
  module.projector = spec;  // its output width is set once the module reading it is known
}

ModuleSpec read_module(const JsonCursor& json, const std::vector<ModuleSpec>& earlier) {
  json.expect_only(
      {"name", "model", "projector", "frozen", "inputs", "tokens", "tokens_per_image", "tokens_per_second"});
  ModuleSpec module;
  module.name = json.at("name").as_string();
  if (module.name.empty()) json.at("name").fail("expected a non-empty module name");
  for (const ModuleSpec& other : earlier) {
    if (other.name == module.name) json.at("name").fail("'" + module.name + "' names two modules");
  }
  if (auto value = json.find("frozen")) module.frozen = value->as_bool();
  if (auto value = json.find("inputs")) {
    for (const JsonCursor& input : value->elements()) {
      const std::size_t index = module_index(earlier, input);
      if (std::find(module.inputs.begin(), module.inputs.end(), index) != module.inputs.end())
        input.fail("'" + earlier[index].name + "' is listed twice");
      module.inputs.push_back(index);
    }
  } else if (!earlier.empty()) {
    module.inputs.push_back(earlier.size() - 1);
  }
  const auto projector = json.find("projector");
  if (projector.has_value() == json.find("model").has_value())
    json.fail("expected exactly one of 'model' (a transformer) and 'projector'");
  if (projector) {
    if (module.inputs.size() != 1) json.fail("a projector reads exactly one module (give 'inputs')");
    for (const char* key : {"tokens", "tokens_per_image", "tokens_per_second"}) {
      if (json.find(key)) json.at(key).fail("a projector has the tokens of the module it reads");
    }
    read_projector(*projector, earlier[module.inputs.front()], module);
    return module;
  }
  module.model = load_model_spec(json.at("model"));
  if (auto value = json.find("tokens")) module.tokens = value->as_enum(kTokenSourceNames);
  const bool images = module.tokens == TokenSource::images;
  const bool timed = module.tokens == TokenSource::video || module.tokens == TokenSource::audio;
  if (images) module.tokens_per_image = module.tokens_per_frame = json.at("tokens_per_image").as_positive_int();
  if (timed) module.tokens_per_second = json.at("tokens_per_second").as_positive_int();
  if (!images && json.find("tokens_per_image")) json.at("tokens_per_image").fail("only image tokens have it");
  if (!timed && json.find("tokens_per_second"))
    json.at("tokens_per_second").fail("only video and audio tokens have it");
  return module;
}

// Each projector hands on the hidden size of the first module that reads it; every module but
// the last is read by a later one, and the last one has the loss.
void connect(MultimodalSpec& spec, const JsonCursor& modules_json) {
  const std::vector<JsonCursor> elements = modules_json.elements();
  for (std::size_t m = 0; m < spec.modules.size(); ++m) {
    ModuleSpec& module = spec.modules[m];
    std::optional<std::size_t> reader;
    for (std::size_t later = m + 1; later < spec.modules.size() && !reader; ++later) {
      const auto& inputs = spec.modules[later].inputs;
      if (std::find(inputs.begin(), inputs.end(), m) != inputs.end()) reader = later;
    }
    const bool last = m + 1 == spec.modules.size();
    if (!reader && !last) elements[m].fail("module '" + module.name + "' is read by no later module");
    if (last && module.projector) elements[m].fail("the last module has the loss: it cannot be a projector");
    if (module.projector) {
      const ModuleSpec& next = spec.modules[*reader];
      if (next.projector) elements[*reader].fail("a projector cannot read another projector");
      module.projector->output_width = next.model.hidden;
    }
  }
}

MultimodalSpec parse_multimodal_spec(const JsonCursor& json) {
  if (!json.find("modules")) {
    MultimodalSpec spec;
    ModuleSpec module;
    module.model = load_model_spec(json);
    spec.name = module.model.name;
    spec.modules.push_back(std::move(module));
    return spec;
  }
  json.expect_only({"name", "description", "source", "modules"});
  MultimodalSpec spec;
  spec.name = json.find("name") ? json.at("name").as_string() : "inline";
  const JsonCursor modules = json.at("modules");
  for (const JsonCursor& element : modules.elements()) spec.modules.push_back(read_module(element, spec.modules));
  if (spec.modules.size() < 2) modules.fail("expected at least two modules (a single model needs no 'modules')");
  connect(spec, modules);
  return spec;
}

}  // namespace

std::int64_t ModuleSpec::output_width() const {
  if (projector) return projector->output_width;
  return !model.has_vocabulary() && model.output_width > 0 ? model.output_width : model.hidden;
}

int MultimodalSpec::layers() const {
  int total = 0;
  for (const ModuleSpec& module : modules) total += module.layers();
  return total;
}

int MultimodalSpec::first_layer(std::size_t module) const {
  int first = 0;
  for (std::size_t m = 0; m < module; ++m) first += modules[m].layers();
  return first;
}

SequenceTokens MultimodalSpec::sequence_tokens() const {
  if (modules.back().tokens != TokenSource::text) return {};
  for (std::size_t input : modules.back().inputs) {
    const ModuleSpec& module = modules[input];
    if (module.tokens == TokenSource::images) return {module.tokens_per_image, module.tokens_per_frame};
  }
  return {};
}

bool MultimodalSpec::trainable_upstream(std::size_t module) const {
  const std::function<bool(std::size_t)> any_trainable = [&](std::size_t m) {
    for (std::size_t input : modules[m].inputs) {
      if (!modules[input].frozen || any_trainable(input)) return true;
    }
    return false;
  };
  return any_trainable(module);
}

std::int64_t module_tokens(const ModuleSpec& module, const SampleShape& sample) {
  switch (module.tokens) {
    case TokenSource::images:
      return SequenceTokens{module.tokens_per_image, module.tokens_per_frame}.of(sample.images, sample.frames);
    case TokenSource::video:
      return std::llround(sample.video_seconds * static_cast<double>(module.tokens_per_second));
    case TokenSource::audio:
      return std::llround(sample.audio_seconds * static_cast<double>(module.tokens_per_second));
    case TokenSource::text:
      break;
  }
  return sample.seq_len;
}

ShardContext module_context(const ModuleSpec& module, const ShardContext& base, const SampleShape& sample) {
  ShardContext context = base;
  switch (module.tokens) {
    case TokenSource::text:
      context.seq_len = sample.seq_len;
      break;
    case TokenSource::images:  // attention within each image
      context.micro_batch = base.micro_batch * sample.images;
      context.seq_len = module.tokens_per_image;
      break;
    case TokenSource::video:
    case TokenSource::audio: {
      context.seq_len = module_tokens(module, sample);
      const bool video = module.tokens == TokenSource::video;
      const double seconds = video ? sample.video_seconds : sample.audio_seconds;
      const double square = video ? sample.video_square_seconds : sample.audio_square_seconds;
      // Clips of t_i tokens attend within themselves: sum(t_i^2) / sum(t_i) keys per query.
      if (square > 0.0 && seconds > 0.0) {
        const auto span = std::llround(static_cast<double>(module.tokens_per_second) * square / seconds);
        if (span < context.seq_len) context.attention_span = std::max<std::int64_t>(span, 1);
      }
      break;
    }
  }
  return context;
}

MultimodalSpec load_multimodal_spec(const JsonCursor& json) {
  return load_spec<MultimodalSpec>(json, "models", "model", parse_multimodal_spec);
}

}  // namespace weft
