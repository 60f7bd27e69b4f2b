#include "simulator/workload/model_spec.hpp"

#include "simulator/core/spec_resolver.hpp"

namespace weft {
namespace {

ModelSpec parse_model_spec(const JsonCursor& json) {
  json.expect_only({"name",       "description",   "source",          "kind",     "layers",      "hidden",
                    "ffn_hidden", "heads",         "kv_heads",        "vocab",    "activation",  "norm",
                    "position",   "max_positions", "tied_embeddings", "qkv_bias", "linear_bias", "dropout",
                    "attention",  "patch_input",   "output_width",    "head_dim"});
  ModelSpec spec;
  spec.name = json.find("name") ? json.at("name").as_string() : "inline";
  spec.kind = json.find("kind") ? json.at("kind").as_enum(kModelKindNames) : ModelKind::decoder;
  auto bounded = [&](const char* key, std::int64_t limit) {
    const JsonCursor value = json.at(key);
    const std::int64_t number = value.as_positive_int();
    if (number > limit) value.fail("expected at most " + std::to_string(limit));
    return number;
  };
  spec.layers = static_cast<int>(bounded("layers", 100'000));
  spec.hidden = bounded("hidden", 1 << 24);
  spec.ffn_hidden = bounded("ffn_hidden", 1 << 26);
  spec.heads = static_cast<int>(bounded("heads", 1 << 16));
  spec.kv_heads = json.find("kv_heads") ? static_cast<int>(bounded("kv_heads", 1 << 16)) : spec.heads;
  if (json.find("head_dim")) {
    spec.head_width = bounded("head_dim", 1 << 16);
  } else if (spec.hidden % spec.heads != 0) {
    json.at("heads").fail(std::to_string(spec.heads) + " heads do not divide hidden " + std::to_string(spec.hidden) +
                          " (give 'head_dim' for heads of another width)");
  }
  if (spec.heads % spec.kv_heads != 0) {
    json.at("kv_heads")
        .fail(std::to_string(spec.kv_heads) + " KV heads do not divide " + std::to_string(spec.heads) + " heads");
  }
  if (spec.has_vocabulary()) {
    spec.vocab = bounded("vocab", 1LL << 32);
  } else if (json.find("vocab")) {
    json.at("vocab").fail("only token models (decoder, masked-lm) have a vocabulary");
  }
  if (auto value = json.find("activation")) spec.activation = value->as_enum(kActivationNames);
  if (auto value = json.find("norm")) spec.norm = value->as_enum(kNormKindNames);
  if (auto value = json.find("position")) spec.position = value->as_enum(kPositionEncodingNames);
  if (spec.position == PositionEncoding::learned) spec.max_positions = bounded("max_positions", 1 << 24);
  if (auto value = json.find("tied_embeddings")) spec.tied_embeddings = value->as_bool();
  if (spec.tied_embeddings && !spec.has_vocabulary()) {
    json.at("tied_embeddings").fail("only token models (decoder, masked-lm) have embeddings to tie");
  }
  if (auto value = json.find("qkv_bias")) spec.qkv_bias = value->as_bool();
  if (auto value = json.find("linear_bias")) spec.linear_bias = value->as_bool();
  if (auto value = json.find("dropout")) {
    spec.dropout = value->as_nonnegative_number();
    if (spec.dropout >= 1.0) value->fail("expected a probability in [0, 1)");
  }
  if (auto value = json.find("attention")) spec.attention = value->as_enum(kAttentionKernelNames);
  if (!spec.has_vocabulary()) {
    spec.patch_input = bounded("patch_input", 1 << 24);
    if (auto value = json.find("output_width")) spec.output_width = value->as_nonnegative_int();
  }
  return spec;
}

}  // namespace

ModelSpec load_model_spec(const JsonCursor& json) {
  return load_spec<ModelSpec>(json, "models", "model", parse_model_spec);
}

}  // namespace weft
