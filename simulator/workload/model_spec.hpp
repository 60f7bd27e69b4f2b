#pragma once

#include <cstdint>
#include <string>

#include "simulator/core/enum_names.hpp"
#include "simulator/core/json_cursor.hpp"

namespace weft {

// decoder: causal LLM with token embedding, LM head and cross-entropy loss.
// encoder: bidirectional transformer over patch tokens (ViT).
// dit: diffusion transformer over latent patch tokens with adaLN-Zero modulation.
// masked-lm: bidirectional transformer over tokens with an LM head over every position and
// cross-entropy loss, as Megatron-LM trains BERT (its head's dense transform and its
// next-sentence head, under 1% of the FLOPs, are not modelled).
enum class ModelKind : std::uint8_t { decoder, encoder, dit, masked_lm };
enum class Activation : std::uint8_t { swiglu, gelu };
enum class NormKind : std::uint8_t { rmsnorm, layernorm };
enum class PositionEncoding : std::uint8_t { rope, learned, none };
// flash: fused attention that keeps no s x s matrices; unfused: scores, softmax and dropout
// materialized, as Korthikanti et al. account them.
enum class AttentionKernel : std::uint8_t { flash, unfused };

inline constexpr EnumNames<ModelKind, 4> kModelKindNames({"decoder", "encoder", "dit", "masked-lm"});
inline constexpr EnumNames<Activation, 2> kActivationNames({"swiglu", "gelu"});
inline constexpr EnumNames<NormKind, 2> kNormKindNames({"rmsnorm", "layernorm"});
inline constexpr EnumNames<PositionEncoding, 3> kPositionEncodingNames({"rope", "learned", "none"});
inline constexpr EnumNames<AttentionKernel, 2> kAttentionKernelNames({"flash", "unfused"});

struct ModelSpec {
  std::string name;
  ModelKind kind = ModelKind::decoder;
  int layers = 0;
  std::int64_t hidden = 0;
  std::int64_t ffn_hidden = 0;
  int heads = 0;
  int kv_heads = 0;  // query groups; equal to heads for multi-head attention
  std::int64_t vocab = 0;
  // The software pads the vocabulary to a multiple of this (Megatron-LM: 128 x TP, so that each
  // TP rank's share of the embedding and the logits is a multiple of 128; set by the scenario from
  // its stack and plan, SoftwareStack::vocab_multiple).
  std::int64_t vocab_multiple = 1;
  Activation activation = Activation::swiglu;
  NormKind norm = NormKind::rmsnorm;
  PositionEncoding position = PositionEncoding::rope;
  std::int64_t max_positions = 0;  // learned position embeddings
  bool tied_embeddings = false;
  bool qkv_bias = false;     // biases on the query, key and value projections only
  bool linear_bias = false;  // biases on every linear layer (GPT)
  double dropout = 0.0;
  AttentionKernel attention = AttentionKernel::flash;
  std::int64_t patch_input = 0;   // encoder/dit: values per patch (channels x patch area)
  std::int64_t output_width = 0;  // encoder/dit: width of the output projection (0: none)

  // A head's width when heads x head width is not the hidden size (Gemma; InternViT-6B's 25 heads
  // padded to 32 so that TP 8 divides them); 0: hidden / heads.
  std::int64_t head_width = 0;

  std::int64_t head_dim() const { return head_width > 0 ? head_width : hidden / heads; }
  // The width of all query heads together: what the query projection writes and the output
  // projection reads.
  std::int64_t attention_width() const { return head_dim() * heads; }
  // The vocabulary the embedding and the logits hold: padded to vocab_multiple.
  std::int64_t padded_vocab() const { return (vocab + vocab_multiple - 1) / vocab_multiple * vocab_multiple; }
  std::int64_t kv_width() const { return head_dim() * kv_heads; }
  bool causal() const { return kind == ModelKind::decoder; }
  // Token models (decoder, masked-lm): a vocabulary, token embeddings and an LM head.
  bool has_vocabulary() const { return kind == ModelKind::decoder || kind == ModelKind::masked_lm; }
};

// A model by name from scenarios/models/, inline, or {"base": "<name>", <fields to replace>}.
ModelSpec load_model_spec(const JsonCursor& json);

}  // namespace weft
