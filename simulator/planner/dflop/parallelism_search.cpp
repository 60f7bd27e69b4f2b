#include "simulator/planner/dflop/parallelism_search.hpp"

#include <algorithm>
#include <map>
#include <utility>

namespace weft::dflop {
namespace {

const ComponentProfile* find_tp(const std::vector<ComponentProfile>& profiles, int tp) {
  for (const ComponentProfile& profile : profiles) {
    if (profile.tp == tp) return &profile;
  }
  return nullptr;
}

// Seconds one GPU's share of a sample's LLM attention takes, averaged over the dataset, at the
// profile's TP: the mean of FLOPs over L_attn_thr at each sample's own length, over TP.
double expected_attention_s(const ModelProfile& profile, const ComponentProfile& llm, const DatasetProfile& data) {
  if (data.samples.empty()) return 0.0;
  double sum = 0.0;
  for (const SampleShape& sample : data.samples) {
    const double flops = profile.flops.llm_attention(sample.seq_len);
    if (flops > 0.0) sum += flops / llm.attention_throughput.at(static_cast<double>(sample.seq_len));
  }
  return sum / static_cast<double>(data.samples.size()) / llm.tp;
}

int ceil_div(int a, int b) { return (a + b - 1) / b; }

// The costliest stage's share of a component's work: ceil(layers / PP) of its layers, not 1 / PP.
double stage_share(int layers, int pp) { return static_cast<double>(ceil_div(layers, pp)) / layers; }

// Algorithm 1's loop body for one candidate and N_mb.
DflopPlan cost_plan(const ModelProfile& profile, const DatasetProfile& data, const SearchSpace& space,
                    const ComponentProfile& encoder, const ComponentProfile& llm, double attention_s, ModuleLayout e,
                    ModuleLayout l, int microbatches) {
  DflopPlan plan;
  plan.encoder = e;
  plan.llm = l;
  plan.microbatches = microbatches;
  // A bucket holds whole samples: the fullest of a slot's L_dp buckets holds ceil(GBS / (N_mb L_dp)),
  // and a slot's images, as many, are spread over the E_dp encoder replicas.
  const std::int64_t buckets = std::int64_t{microbatches} * l.dp;
  const double llm_samples = static_cast<double>((space.global_batch + buckets - 1) / buckets);
  const double encoder_samples = llm_samples * l.dp / e.dp;
  plan.images_per_microbatch = data.mean_images * encoder_samples;
  plan.tokens_per_microbatch = data.mean_tokens * llm_samples;
  const int encoder_layers = ceil_div(encoder.layers, e.pp);
  const int llm_layers = ceil_div(llm.layers, l.pp);
  const double encoder_share = stage_share(encoder.layers, e.pp);
  const double llm_share = stage_share(llm.layers, l.pp);
  if (plan.images_per_microbatch > 0.0) {
    plan.encoder_stage_s = profile.flops.encoder_per_image * plan.images_per_microbatch * encoder_share /
                           (encoder.throughput.at(plan.images_per_microbatch) * e.tp);
  }
  const double linear_s =
      profile.flops.llm_linear_per_token * data.mean_tokens / (llm.throughput.at(plan.tokens_per_microbatch) * l.tp);
  plan.llm_stage_s = llm_samples * (linear_s + attention_s) * llm_share;
  plan.expected_makespan_s = (microbatches + e.pp + l.pp - 1) * std::max(plan.encoder_stage_s, plan.llm_stage_s);
  // Eq. 4: an encoder microbatch's activations live through the whole pipeline's depth.
  plan.encoder_memory = encoder.model_state_bytes(encoder_layers) +
                        (e.pp + l.pp) * encoder.activation_bytes(encoder_layers, plan.images_per_microbatch);
  plan.llm_memory =
      llm.model_state_bytes(llm_layers) + l.pp * llm.activation_bytes(llm_layers, plan.tokens_per_microbatch);
  return plan;
}

// FindCombs: every (TP, PP, DP) of `gpus` GPUs a component can take.
std::vector<std::pair<ModuleLayout, const ComponentProfile*>> layouts(const std::vector<ComponentProfile>& profiles,
                                                                      int gpus) {
  std::vector<std::pair<ModuleLayout, const ComponentProfile*>> out;
  for (const ComponentProfile& profile : profiles) {
    if (gpus % profile.tp != 0) continue;
    const int rest = gpus / profile.tp;
    for (int pp = 1; pp <= std::min(rest, profile.layers); ++pp) {
      if (rest % pp == 0) out.push_back({{profile.tp, pp, rest / pp}, &profile});
    }
  }
  return out;
}

}  // namespace

DatasetProfile profile_dataset(std::vector<SampleShape> samples) {
  DatasetProfile out;
  out.samples = std::move(samples);
  for (const SampleShape& sample : out.samples) {
    out.mean_images += static_cast<double>(sample.images);
    out.mean_frames += static_cast<double>(sample.frames);
    out.mean_tokens += static_cast<double>(sample.seq_len);
  }
  if (!out.samples.empty()) {
    out.mean_images /= static_cast<double>(out.samples.size());
    out.mean_frames /= static_cast<double>(out.samples.size());
    out.mean_tokens /= static_cast<double>(out.samples.size());
  }
  return out;
}

SearchResult find_parallelism(const ModelProfile& profile, const DatasetProfile& data, const SearchSpace& space) {
  SearchResult result;
  std::map<int, double> attention_s;
  for (const ComponentProfile& llm : profile.llm) attention_s[llm.tp] = expected_attention_s(profile, llm, data);
  auto consider = [&](ModuleLayout e, const ComponentProfile& encoder, ModuleLayout l, const ComponentProfile& llm) {
    ++result.candidates;
    const std::int64_t most = space.global_batch / l.dp;
    for (std::int64_t i = 1; i <= most; ++i) {
      ++result.evaluated;
      const DflopPlan plan =
          cost_plan(profile, data, space, encoder, llm, attention_s.at(llm.tp), e, l, static_cast<int>(i));
      if (plan.encoder_memory > space.memory_capacity || plan.llm_memory > space.memory_capacity) continue;
      ++result.fitting;
      if (!result.best || plan.expected_makespan_s < result.best->expected_makespan_s) result.best = plan;
    }
  };
  if (space.uniform) {
    for (const ComponentProfile& encoder : profile.encoder) {
      const ComponentProfile* llm = find_tp(profile.llm, encoder.tp);
      if (llm == nullptr || space.gpus % encoder.tp != 0) continue;
      const int rest = space.gpus / encoder.tp;
      for (int dp = 1; dp <= rest; ++dp) {
        if (rest % dp != 0) continue;
        const int stages = rest / dp;
        for (int e_pp = 1; e_pp < stages; ++e_pp) {
          const int l_pp = stages - e_pp;
          if (e_pp > encoder.layers || l_pp > llm->layers) continue;
          consider({encoder.tp, e_pp, dp}, encoder, {encoder.tp, l_pp, dp}, *llm);
        }
      }
    }
    return result;
  }
  for (int encoder_gpus = 1; encoder_gpus < space.gpus; ++encoder_gpus) {
    const auto encoder_layouts = layouts(profile.encoder, encoder_gpus);
    const auto llm_layouts = layouts(profile.llm, space.gpus - encoder_gpus);
    for (const auto& [e, encoder] : encoder_layouts) {
      for (const auto& [l, llm] : llm_layouts) consider(e, *encoder, l, *llm);
    }
  }
  return result;
}

std::optional<DflopPlan> evaluate_plan(const ModelProfile& profile, const DatasetProfile& data,
                                       const SearchSpace& space, ModuleLayout encoder, ModuleLayout llm,
                                       int microbatches) {
  const ComponentProfile* e = find_tp(profile.encoder, encoder.tp);
  const ComponentProfile* l = find_tp(profile.llm, llm.tp);
  if (e == nullptr || l == nullptr) return std::nullopt;
  return cost_plan(profile, data, space, *e, *l, expected_attention_s(profile, *l, data), encoder, llm, microbatches);
}

ItemDurations item_durations(const ModelProfile& profile, const DflopPlan& plan, std::span<const SampleShape> samples) {
  const ComponentProfile* encoder = find_tp(profile.encoder, plan.encoder.tp);
  const ComponentProfile* llm = find_tp(profile.llm, plan.llm.tp);
  ItemDurations out;
  if (encoder == nullptr || llm == nullptr) return out;
  // Per second of a stage: the component's FLOP/s over its costliest stage's share of the layers.
  const double encoder_rate = plan.images_per_microbatch > 0.0
                                  ? encoder->throughput.at(plan.images_per_microbatch) * plan.encoder.tp /
                                        stage_share(encoder->layers, plan.encoder.pp) * plan.encoder.dp / plan.llm.dp
                                  : 0.0;
  const double llm_share = stage_share(llm->layers, plan.llm.pp);
  const double linear_rate = llm->throughput.at(plan.tokens_per_microbatch) * plan.llm.tp / llm_share;
  for (const SampleShape& sample : samples) {
    const double encoder_flops = profile.flops.encoder(sample.images);
    out.encoder.push_back(encoder_flops > 0.0 ? encoder_flops / encoder_rate : 0.0);
    const double attention = profile.flops.llm_attention(sample.seq_len);
    const double attention_s =
        attention > 0.0
            ? attention * llm_share / (llm->attention_throughput.at(static_cast<double>(sample.seq_len)) * plan.llm.tp)
            : 0.0;
    out.llm.push_back(profile.flops.llm_linear(sample.seq_len) / linear_rate + attention_s);
  }
  return out;
}

}  // namespace weft::dflop
