#include "simulator/workload/model.hpp"

#include <catch2/catch.hpp>

namespace weft {
namespace {

Model named_model(const std::string& name) {
  const auto document = JsonDocument::parse_text("\"" + name + "\"", "test");
  return Model(load_model_spec(document.root()));
}

TEST_CASE("parameter counts match the published sizes", "[model]") {
  // Published totals: exact counts of the Hugging Face checkpoints where available, otherwise the
  // paper's nominal size.
  const std::vector<std::pair<std::string, double>> published = {
      {"gpt3-1.3b", 1.3e9},
      {"gpt3-2.7b", 2.7e9},
      {"gpt3-6.7b", 6.7e9},
      {"gpt3-13b", 13.0e9},
      {"gpt3-175b", 175.0e9},
      {"llama2-7b", 6'738'415'616.0},
      {"llama2-13b", 13'015'864'320.0},
      {"llama2-70b", 68'976'648'192.0},
      {"llama3-8b", 8'030'261'248.0},
      {"llama3-70b", 70'553'706'496.0},
      {"llama3-405b", 405'853'388'800.0},
      {"qwen2-7b", 7'615'616'512.0},
      {"qwen2-32b", 32'763'876'352.0},
      {"qwen2-72b", 72'706'203'648.0},
      {"vit-22b", 21'743'000'000.0},
  };
  for (const auto& [name, size] : published) {
    INFO(name);
    CHECK(static_cast<double>(named_model(name).parameter_count()) == Approx(size).epsilon(0.02));
  }
}

TEST_CASE("Llama and Qwen parameter counts are exact", "[model]") {
  CHECK(named_model("llama3-8b").parameter_count() == 8'030'261'248);
  CHECK(named_model("llama2-70b").parameter_count() == 68'976'648'192);
  CHECK(named_model("qwen2-7b").parameter_count() == 7'615'616'512);
}

TEST_CASE("ViT 5B and DiT parameter counts follow their layer shapes", "[model]") {
  // ViT 5B: 63 x (4h^2 + 4h biases + 2hf + f + h + two LayerNorms 4h) + patch embedding + final norm.
  const double h = 1792, f = 15360;
  const double vit_layer = 4 * h * h + 4 * h + 2 * h * f + f + h + 4 * h;
  CHECK(static_cast<double>(named_model("vit-5b").parameter_count()) ==
        Approx(63 * vit_layer + (588 * h + h) + 2 * h).epsilon(1e-9));
  // DiT 5B adds adaLN-Zero (6h^2 + 6h per layer, 2h^2 + 2h at the end) and the output projection.
  const double dh = 3584, df = 10240;
  const double dit_layer = 4 * dh * dh + 4 * dh + 2 * dh * df + df + dh + 4 * dh + 6 * dh * dh + 6 * dh;
  CHECK(static_cast<double>(named_model("dit-5b").parameter_count()) ==
        Approx(28 * dit_layer + (64 * dh + dh) + 2 * dh + (2 * dh * dh + 2 * dh) + (dh * 64 + 64)).epsilon(1e-9));
}

TEST_CASE("InternViT-6B holds its published 5.54 B parameters, and padded heads add their projections", "[model]") {
  // OpenGVLab's model card: "Params (M): 5540 (the last 3 blocks are discarded)".
  const Model internvit = named_model("internvit-6b");
  CHECK(static_cast<double>(internvit.parameter_count()) == Approx(5540e6).epsilon(0.005));
  // Megatron-LM pads its 25 heads of 128 to 32: per layer the query, key and value projections
  // gain 3 x 7 x 128 outputs (weights and biases) and the output projection 7 x 128 inputs.
  const Model padded = named_model("internvit-6b-32heads");
  CHECK(padded.spec().attention_width() == 4096);
  const std::int64_t h = 3200, extra = 7 * 128;
  CHECK(padded.parameter_count() - internvit.parameter_count() == 45 * (3 * extra * h + 3 * extra + extra * h));
  // Its attention core runs 32 heads of 128 (8 a rank at TP 4), on 1,024 patch tokens.
  ShardContext context;
  context.tp = 4;
  context.micro_batch = 1;
  context.seq_len = 1024;
  int cores = 0;
  for (const Step& step : padded.layer_steps(context, 0)) {
    if (!step.attention_core) continue;
    ++cores;
    CHECK(step.forward->shape == WorkShape{1, 8, 1024, 1024, 128, 0});
  }
  CHECK(cores == 1);
}

// Megatron-LM's num_floating_point_operations for dense decoders (no recompute): 12 B s L h^2 x
// ((1 + groups/heads + s/h) + (f/h)(3/2 if gated) + V/(2 L h)), which for GPT-3 is the closed form
// 72 B s L h^2 (1 + s/(6h) + V/(12 L h)).
double megatron_flops(double batch, double s, const ModelSpec& m) {
  const double h = static_cast<double>(m.hidden), layers = m.layers;
  const double gated = m.activation == Activation::swiglu ? 1.5 : 1.0;
  return 12.0 * batch * s * layers * h * h *
         ((1.0 + static_cast<double>(m.kv_heads) / m.heads + s / h) + static_cast<double>(m.ffn_hidden) / h * gated +
          static_cast<double>(m.vocab) / (2.0 * layers * h));
}

double model_flops_per_iteration(const Model& model, std::int64_t batch, std::int64_t seq_len) {
  ShardContext context;
  context.micro_batch = 1;
  context.seq_len = seq_len;
  double forward = 0.0;
  for (const Step& step : model.input_steps(context)) forward += step.model_flops;
  for (const Step& step : model.layer_steps(context, 0)) forward += step.model_flops * model.layer_count();
  for (const Step& step : model.output_steps(context, false)) forward += step.model_flops;
  return 3.0 * forward * static_cast<double>(batch);  // backward is twice the forward
}

TEST_CASE("model FLOPs per iteration match Megatron's formula", "[model][flops]") {
  const Model gpt = named_model("gpt3-175b");
  const double b = 1536, s = 2048, h = 12288, layers = 96, vocab = 50257;
  const double closed_form = 72.0 * b * s * layers * h * h * (1 + s / (6 * h) + vocab / (12 * layers * h));
  CHECK(model_flops_per_iteration(gpt, 1536, 2048) == Approx(closed_form).epsilon(0.01));
  for (const char* name : {"llama3-8b", "llama3-405b", "qwen2-72b", "llama2-13b"}) {
    INFO(name);
    const Model model = named_model(name);
    CHECK(model_flops_per_iteration(model, 512, 8192) == Approx(megatron_flops(512, 8192, model.spec())).epsilon(0.01));
  }
}

// Activation bytes saved by one layer for one microbatch (Korthikanti et al. 2022, Table 2).
Bytes layer_activations(const Model& model, int tp, bool sequence_parallel, bool drop_recomputable) {
  ShardContext context;
  context.tp = tp;
  context.sequence_parallel = sequence_parallel;
  context.micro_batch = 4;
  context.seq_len = 2048;
  Bytes saved = 0;
  for (const Step& step : model.layer_steps(context, 0)) {
    saved += step.saved_bytes - (drop_recomputable ? step.recomputable_bytes : 0);
  }
  return saved;
}

TEST_CASE("per-layer activation memory matches Korthikanti et al.", "[model][memory]") {
  // A GPT layer as the paper accounts it: unfused attention with dropout, GeLU MLP of 4h.
  const auto document = JsonDocument::parse_text(R"({"base": "gpt3-13b", "attention": "unfused"})", "test");
  const Model gpt(load_model_spec(document.root()));
  const double s = 2048, b = 4, h = 5120, a = 40, t = 8;
  CHECK(static_cast<double>(layer_activations(gpt, 1, false, false)) == s * b * h * (34 + 5 * a * s / h));
  CHECK(static_cast<double>(layer_activations(gpt, 8, false, false)) ==
        Approx(s * b * h * (10 + 24 / t + 5 * a * s / (h * t))).epsilon(1e-12));
  CHECK(static_cast<double>(layer_activations(gpt, 8, true, false)) ==
        Approx(s * b * h / t * (34 + 5 * a * s / h)).epsilon(1e-12));
  CHECK(static_cast<double>(layer_activations(gpt, 8, true, true)) == Approx(s * b * h * 34 / t).epsilon(1e-12));
}

TEST_CASE("grouped-query attention ops carry their key and value heads", "[model]") {
  // Llama 3 8B: 32 query heads on 8 key and value heads; at TP 4, 8 on 2 per rank.
  const Model llama = named_model("llama3-8b");
  for (int tp : {1, 4}) {
    ShardContext context;
    context.tp = tp;
    context.micro_batch = 1;
    context.seq_len = 8192;
    bool found = false;
    for (const Step& step : llama.layer_steps(context, 0)) {
      if (!step.attention_core) continue;
      found = true;
      CHECK(step.forward->shape == WorkShape{1, 32 / tp, 8192, 8192, 128, 1, 8 / tp});
      CHECK(step.backward->shape == step.forward->shape);
    }
    CHECK(found);
  }
  // Multi-head attention keeps six dimensions.
  ShardContext context;
  for (const Step& step : named_model("gpt3-1.3b").layer_steps(context, 0)) {
    if (step.attention_core) CHECK(step.forward->shape.size() == 6);
  }
}

TEST_CASE("a layer's steps are those emitted for it, whichever layer's steps were emitted first", "[model]") {
  // A model emits each shard context's layer once and renames the copies; a fresh model emits
  // the asked layer itself, so the two must agree step for step, names included (the prefix and
  // layer numbers of other lengths).
  const ModelSpec spec = named_model("llama3-8b").spec();
  ShardContext context;
  context.tp = 2;
  context.sequence_parallel = true;
  context.seq_len = 4096;
  ShardContext other = context;
  other.tp = 4;
  const Model warmed(spec, ContextParallelAlgorithm::ring, ModelHead::loss, "llm.");
  const std::vector<Step> emitted_first = warmed.layer_steps(context, 7);
  CHECK(emitted_first.front().name.starts_with("llm.L7."));
  for (int layer : {0, 7, 12, 31}) {
    INFO(layer);
    const Model fresh(spec, ContextParallelAlgorithm::ring, ModelHead::loss, "llm.");
    const std::vector<Step> direct = fresh.layer_steps(context, layer);
    CHECK(direct.front().name.starts_with("llm.L" + std::to_string(layer) + "."));
    CHECK(warmed.layer_steps(context, layer) == direct);
  }
  // Another context is its own emission: TP 4 shards the layer's weights twice as finely as TP
  // 2, all but its two norms' 4,096 weights each, which every rank holds whole.
  const std::vector<Step> finer = warmed.layer_steps(other, 3);
  const Model fresh(spec, ContextParallelAlgorithm::ring, ModelHead::loss, "llm.");
  CHECK(finer == fresh.layer_steps(other, 3));
  constexpr std::int64_t kNormWeights = 2 * 4096;
  CHECK(parameters_of(finer) * 2 - kNormWeights == parameters_of(warmed.layer_steps(context, 3)));
}

TEST_CASE("a masked-LM model attends both ways over tokens and keeps the LM head", "[model]") {
  // BERT-Large (Devlin et al. 2019): 340M parameters by its paper; by its shape, 24 layers of
  // 12 h^2 + 13 h, token and position embeddings and the final norm (its pooler, token types and
  // next-sentence head are left out).
  const Model bert = named_model("bert-large");
  REQUIRE(bert.spec().kind == ModelKind::masked_lm);
  CHECK_FALSE(bert.spec().causal());
  const double h = 1024, layers = 24, vocab = 30522, positions = 512;
  CHECK(static_cast<double>(bert.parameter_count()) ==
        Approx(layers * (12 * h * h + 13 * h) + (vocab + positions) * h + 2 * h).epsilon(0.001));
  CHECK(static_cast<double>(bert.parameter_count()) == Approx(340e6).epsilon(0.02));
  // The same layers as a causal decoder: every op alike but attention, which computes the full
  // s x s scores instead of half of them.
  const auto document = JsonDocument::parse_text(R"({"base": "bert-large", "kind": "decoder"})", "test");
  const Model decoder(load_model_spec(document.root()));
  ShardContext context;
  context.micro_batch = 2;
  context.seq_len = 512;
  const std::vector<Step> both_ways = bert.layer_steps(context, 0);
  const std::vector<Step> causal = decoder.layer_steps(context, 0);
  REQUIRE(both_ways.size() == causal.size());
  const double full_scores = 4.0 * 2 * 512 * 512 * h;  // QK^T and PV, 2 FLOPs a multiply-add
  for (std::size_t i = 0; i < both_ways.size(); ++i) {
    INFO(both_ways[i].name);
    if (both_ways[i].attention_core) {
      CHECK(both_ways[i].forward->flops == Approx(full_scores));
      CHECK(causal[i].forward->flops == Approx(full_scores / 2));
      CHECK(both_ways[i].forward->shape[5] == 0);
    } else if (both_ways[i].forward) {
      CHECK(both_ways[i].forward->flops == causal[i].forward->flops);
    }
  }
}

}  // namespace
}  // namespace weft
