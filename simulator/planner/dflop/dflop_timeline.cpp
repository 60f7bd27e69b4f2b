#include "simulator/planner/dflop/dflop_timeline.hpp"

#include <algorithm>
#include <cmath>

#include "simulator/planner/dip/stage_interleaving.hpp"
#include "simulator/planner/entrain/pipeline_balancing.hpp"

namespace weft::dflop {
namespace {

std::int64_t padded(std::int64_t tokens, std::int64_t pad_to) { return (tokens + pad_to - 1) / pad_to * pad_to; }

struct PassTimes {
  TimeNs forward = 0;
  TimeNs backward = 0;
};

// The layers [first, first + count) of the encoder for `images` images.
PassTimes encoder_stage(ModelCosts& costs, int tp, int first, int count, std::int64_t images, std::int64_t pad_to) {
  PassTimes out;
  if (images == 0) return out;
  dip::LayerCosts& layers = costs.at_tp(tp);
  for (int layer = first; layer < first + count; ++layer) {
    const dip::LayerCost& cost = layers.in_stage(layer, {pad_to, images, 0.0, 0.0});
    out.forward += cost.forward;
    out.backward += cost.latency(costs.policy()) - cost.forward;
  }
  return out;
}

// The layers [first, first + count) of the LLM for one bucket's samples packed into one sequence.
PassTimes llm_stage(ModelCosts& costs, int tp, int first, int count, std::span<const SampleShape> samples,
                    const std::vector<std::size_t>& bucket, std::int64_t pad_to) {
  PassTimes out;
  std::int64_t tokens = 0;
  for (const std::size_t i : bucket) tokens += samples[i].seq_len;
  if (tokens == 0) return out;
  dip::LayerCosts& layers = costs.at_tp(tp);
  const std::int64_t packed = padded(tokens, pad_to);
  for (int layer = first; layer < first + count; ++layer) {
    const LayerSplit split = split_layer(layers.in_stage(layer, {packed, 0, 0.0, 0.0}), costs.policy());
    out.forward += split.forward;
    out.backward += split.backward;
  }
  // Each sample's attention apart (variable-length attention): the same in every layer of the LLM.
  for (const std::size_t i : bucket) {
    if (samples[i].seq_len == 0) continue;
    const LayerSplit split =
        split_layer(layers.in_stage(first, {padded(samples[i].seq_len, pad_to), 0, 0.0, 0.0}), costs.policy());
    out.forward += count * split.attention_forward;
    out.backward += count * split.attention_backward;
  }
  return out;
}

std::vector<double> layer_costs(ModelCosts& costs, Component component, int tp, const SampleShape& shape) {
  const auto [first, end] = costs.layer_range(component);
  std::vector<double> out;
  for (int layer = first; layer < end; ++layer)
    out.push_back(static_cast<double>(costs.at_tp(tp).in_stage(layer, shape).latency(costs.policy())));
  return out;
}

Bytes element_bytes(const ModelCosts& costs) { return bytes_per_element(costs.scenario().training.dtype); }

}  // namespace

StageLayers plan_stage_layers(ModelCosts& costs, const DflopPlan& plan, std::int64_t pad_to) {
  const std::int64_t images = std::max<std::int64_t>(1, std::llround(plan.images_per_microbatch));
  const std::int64_t tokens = padded(std::max<std::int64_t>(1, std::llround(plan.tokens_per_microbatch)), pad_to);
  StageLayers out;
  out.encoder =
      entrain::min_max_partition(layer_costs(costs, Component::encoder, plan.encoder.tp, {pad_to, images, 0.0, 0.0}),
                                 plan.encoder.pp)
          .layers;
  out.llm =
      entrain::min_max_partition(layer_costs(costs, Component::llm, plan.llm.tp, {tokens, 0, 0.0, 0.0}), plan.llm.pp)
          .layers;
  return out;
}

TimeNs time_iteration(ModelCosts& costs, const DflopPlan& plan, const StageLayers& stages,
                      std::span<const SampleShape> samples, const std::vector<std::vector<std::size_t>>& buckets,
                      std::int64_t pad_to) {
  const int slots = plan.microbatches;
  const int replicas = plan.llm.dp;
  const int encoder_ranks = plan.encoder.pp;
  const int ranks = encoder_ranks + plan.llm.pp;
  const MultimodalSpec& spec = costs.model().spec();
  const ModuleSpec& llm_module = spec.modules.back();
  const std::int64_t tokens_per_image = spec.sequence_tokens_per_image();
  const Bytes element = element_bytes(costs);
  // Per rank and slot: each pass's time, and the bytes its forward hands to the next rank.
  std::vector<std::vector<PassTimes>> pass(static_cast<std::size_t>(ranks), std::vector<PassTimes>(slots));
  std::vector<std::vector<TimeNs>> send(static_cast<std::size_t>(ranks), std::vector<TimeNs>(slots, 0));
  const int encoder_first = costs.layer_range(Component::encoder).first;
  const int llm_first = costs.layer_range(Component::llm).first;
  for (int k = 0; k < slots; ++k) {
    std::int64_t slot_images = 0;
    std::int64_t largest_tokens = 0;
    for (int g = 0; g < replicas; ++g) {
      std::int64_t tokens = 0;
      for (const std::size_t i : buckets[static_cast<std::size_t>(k * replicas + g)]) {
        slot_images += samples[i].images;
        tokens += samples[i].seq_len;
      }
      largest_tokens = std::max(largest_tokens, padded(tokens, pad_to));
    }
    const std::int64_t replica_images = (slot_images + plan.encoder.dp - 1) / plan.encoder.dp;
    int first = encoder_first;
    for (int r = 0; r < encoder_ranks; ++r) {
      const int count = stages.encoder[static_cast<std::size_t>(r)];
      pass[static_cast<std::size_t>(r)][static_cast<std::size_t>(k)] =
          encoder_stage(costs, plan.encoder.tp, first, count, replica_images, pad_to);
      first += count;
      const std::size_t module = costs.at_tp(plan.encoder.tp).module_of(first - 1);
      const Bytes bytes = module_tokens(spec.modules[module], {pad_to, replica_images, 0.0, 0.0}) *
                          spec.modules[module].output_width() * element / plan.encoder.tp;
      if (r + 1 < encoder_ranks) {
        send[static_cast<std::size_t>(r)][static_cast<std::size_t>(k)] =
            costs.transfer_time(plan.encoder.tp, plan.encoder.dp, r, r + 1, bytes);
        continue;
      }
      // To the LLM: the projected image tokens, straight to each LLM replica when the data groups
      // match, else gathered on one rank and scattered again.
      const Bytes projected = tokens_per_image * llm_module.model.hidden * element;
      const TimeNs one =
          costs.transfer_time(plan.encoder.tp, plan.encoder.dp, r, r + 1, replica_images * projected / plan.encoder.tp);
      send[static_cast<std::size_t>(r)][static_cast<std::size_t>(k)] =
          plan.encoder.dp == plan.llm.dp
              ? one
              : 2 * costs.transfer_time(plan.encoder.tp, plan.encoder.dp, r, r + 1, slot_images * projected);
    }
    first = llm_first;
    for (int r = 0; r < plan.llm.pp; ++r) {
      const int count = stages.llm[static_cast<std::size_t>(r)];
      PassTimes& slowest = pass[static_cast<std::size_t>(encoder_ranks + r)][static_cast<std::size_t>(k)];
      for (int g = 0; g < replicas; ++g) {
        const PassTimes times = llm_stage(costs, plan.llm.tp, first, count, samples,
                                          buckets[static_cast<std::size_t>(k * replicas + g)], pad_to);
        slowest.forward = std::max(slowest.forward, times.forward);
        slowest.backward = std::max(slowest.backward, times.backward);
      }
      first += count;
      if (r + 1 < plan.llm.pp) {
        send[static_cast<std::size_t>(encoder_ranks + r)][static_cast<std::size_t>(k)] = costs.transfer_time(
            plan.llm.tp, plan.llm.dp, r, r + 1, largest_tokens * llm_module.model.hidden * element / plan.llm.tp);
      }
    }
  }
  // Forward pass of (rank r, slot k) at 2 (r x slots + k), its backward pass after it.
  auto index = [&](int r, int k, bool backward) {
    return static_cast<std::size_t>(2 * (r * slots + k) + (backward ? 1 : 0));
  };
  std::vector<dip::PipelineStage> graph(static_cast<std::size_t>(2 * ranks * slots));
  for (int r = 0; r < ranks; ++r) {
    for (int k = 0; k < slots; ++k) {
      const PassTimes& times = pass[static_cast<std::size_t>(r)][static_cast<std::size_t>(k)];
      dip::PipelineStage& forward = graph[index(r, k, false)];
      forward.rank = r;
      forward.duration = times.forward;
      if (r > 0) {
        forward.predecessors = {index(r - 1, k, false)};
        forward.arrival = {send[static_cast<std::size_t>(r - 1)][static_cast<std::size_t>(k)]};
      }
      dip::PipelineStage& backward = graph[index(r, k, true)];
      backward.rank = r;
      backward.backward = true;
      backward.duration = times.backward;
      backward.frees = index(r, k, false);
      if (r + 1 < ranks) {
        backward.predecessors = {index(r + 1, k, true), index(r, k, false)};
        backward.arrival = {send[static_cast<std::size_t>(r)][static_cast<std::size_t>(k)], 0};
      } else {
        backward.predecessors = {index(r, k, false)};
      }
    }
  }
  // 1F1B: a rank's warm-up forwards (stages after it, at most the slots), then one backward and
  // one forward in turn, then the rest of the backwards.
  std::vector<std::vector<std::size_t>> order(static_cast<std::size_t>(ranks));
  for (int r = 0; r < ranks; ++r) {
    const int warmup = std::min(ranks - r, slots);
    auto& rank_order = order[static_cast<std::size_t>(r)];
    for (int k = 0; k < warmup; ++k) rank_order.push_back(index(r, k, false));
    for (int k = 0; k < slots; ++k) {
      rank_order.push_back(index(r, k, true));
      if (warmup + k < slots) rank_order.push_back(index(r, warmup + k, false));
    }
  }
  return dip::time_stage_orders(graph, order).makespan;
}

}  // namespace weft::dflop
