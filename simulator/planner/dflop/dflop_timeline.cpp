#include "simulator/planner/dflop/dflop_timeline.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <utility>

#include "simulator/planner/dip/stage_interleaving.hpp"
#include "simulator/planner/entrain/pipeline_balancing.hpp"

namespace weft::dflop {
namespace {

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
                      std::int64_t pad_to, std::span<const double> delays) {
  const int slots = plan.microbatches;
  const ModuleLayout& e = plan.encoder;
  const ModuleLayout& l = plan.llm;
  const int depth = e.pp + l.pp;
  // With matching data groups encoder replica g feeds LLM replica g; otherwise DFLOP's
  // communicator gathers a slot's activations from every encoder replica and scatters them.
  const bool direct = e.dp == l.dp;
  const MultimodalSpec& spec = costs.model().spec();
  const std::int64_t llm_hidden = spec.modules.back().model.hidden;
  const Bytes element = bytes_per_element(costs.scenario().training.dtype);
  const SequenceTokens sequence_tokens = spec.sequence_tokens();
  const Bytes token_bytes = llm_hidden * element;  // of a projected image token
  // The sequence tokens of the images (and video frames) of `bucket`'s samples.
  auto image_tokens = [&](const std::vector<std::size_t>& bucket) {
    std::int64_t tokens = 0;
    for (const std::size_t i : bucket) tokens += sequence_tokens.of(samples[i].images, samples[i].frames);
    return tokens;
  };
  const int encoder_first = costs.layer_range(Component::encoder).first;
  const int llm_first = costs.layer_range(Component::llm).first;
  auto bucket = [&](int k, int g) -> const std::vector<std::size_t>& {
    return buckets[static_cast<std::size_t>(k * l.dp + g)];
  };

  // Ranks: encoder replica g's stage r at g x E_pp + r, then LLM replica g's stage r after all of
  // them. Pass (rank, slot): forward at 2 (rank x slots + slot), its backward after it.
  const int encoder_ranks = e.dp * e.pp;
  const int ranks = encoder_ranks + l.dp * l.pp;
  auto rank_of = [&](bool llm, int g, int r) { return llm ? encoder_ranks + g * l.pp + r : g * e.pp + r; };
  auto index = [&](int rank, int k, bool backward) {
    return static_cast<std::size_t>(2 * (rank * slots + k) + (backward ? 1 : 0));
  };
  std::vector<dip::PipelineStage> graph(static_cast<std::size_t>(2 * ranks * slots));
  // Rank `to`'s pass of slot k follows rank `from`'s, `sent` ns after it in each direction.
  auto link = [&](int from, int to, int k, TimeNs sent) {
    dip::PipelineStage& forward = graph[index(to, k, false)];
    forward.predecessors.push_back(index(from, k, false));
    forward.arrival.push_back(sent);
    dip::PipelineStage& backward = graph[index(from, k, true)];
    backward.predecessors.push_back(index(to, k, true));
    backward.arrival.push_back(sent);
  };
  auto set_pass = [&](int rank, int k, const PassTimes& times) {
    dip::PipelineStage& forward = graph[index(rank, k, false)];
    forward.rank = rank;
    forward.duration = times.forward;
    dip::PipelineStage& backward = graph[index(rank, k, true)];
    backward.rank = rank;
    backward.backward = true;
    backward.duration = times.backward;
    backward.frees = index(rank, k, false);
    backward.predecessors.push_back(index(rank, k, false));
    backward.arrival.push_back(0);
  };
  for (int k = 0; k < slots; ++k) {
    std::int64_t slot_images = 0;
    std::int64_t slot_tokens = 0;  // of its images in the LLM's sequences
    for (int g = 0; g < l.dp; ++g) {
      for (const std::size_t i : bucket(k, g)) slot_images += samples[i].images;
      slot_tokens += image_tokens(bucket(k, g));
    }
    for (int g = 0; g < e.dp; ++g) {
      std::int64_t images = 0;
      if (direct) {
        for (const std::size_t i : bucket(k, g)) images += samples[i].images;
      } else {
        // Whole images, as evenly as they go: the first replicas take one more.
        images = slot_images / e.dp + (g < slot_images % e.dp ? 1 : 0);
      }
      int first = encoder_first;
      for (int r = 0; r < e.pp; ++r) {
        const int count = stages.encoder[static_cast<std::size_t>(r)];
        set_pass(rank_of(false, g, r), k, encoder_stage(costs, e.tp, first, count, images, pad_to));
        first += count;
        if (r + 1 == e.pp) break;
        const ModuleSpec& module = spec.modules[costs.at_tp(e.tp).module_of(first - 1)];
        const Bytes bytes = module_tokens(module, {pad_to, images, 0.0, 0.0}) * module.output_width() * element / e.tp;
        link(rank_of(false, g, r), rank_of(false, g, r + 1), k, costs.transfer_time(e.tp, e.dp, r, r + 1, bytes));
      }
      if (direct) {
        link(rank_of(false, g, e.pp - 1), rank_of(true, g, 0), k,
             costs.transfer_time(e.tp, e.dp, e.pp - 1, e.pp, image_tokens(bucket(k, g)) * token_bytes / e.tp));
      }
    }
    if (!direct) {
      // Gathered to one rank and scattered again: the slot's whole activations through it twice.
      const TimeNs relay = 2 * costs.transfer_time(e.tp, e.dp, e.pp - 1, e.pp, slot_tokens * token_bytes);
      for (int from = 0; from < e.dp; ++from) {
        for (int to = 0; to < l.dp; ++to) link(rank_of(false, from, e.pp - 1), rank_of(true, to, 0), k, relay);
      }
    }
    for (int g = 0; g < l.dp; ++g) {
      std::int64_t tokens = 0;
      for (const std::size_t i : bucket(k, g)) tokens += samples[i].seq_len;
      int first = llm_first;
      for (int r = 0; r < l.pp; ++r) {
        const int count = stages.llm[static_cast<std::size_t>(r)];
        PassTimes times = llm_stage(costs, l.tp, first, count, samples, bucket(k, g), pad_to);
        if (r == 0 && !delays.empty()) {
          for (const std::size_t i : bucket(k, g)) times.forward += std::llround(delays[i] * kNsPerSecond);
        }
        set_pass(rank_of(true, g, r), k, times);
        first += count;
        if (r + 1 == l.pp) break;
        link(rank_of(true, g, r), rank_of(true, g, r + 1), k,
             costs.transfer_time(l.tp, l.dp, r, r + 1, padded(tokens, pad_to) * llm_hidden * element / l.tp));
      }
    }
  }
  // 1F1B on every rank: the warm-up forwards (the stages after it in the whole pipeline, at most
  // the slots), then one backward and one forward in turn, then the rest of the backwards.
  std::vector<std::vector<std::size_t>> order(static_cast<std::size_t>(ranks));
  for (int rank = 0; rank < ranks; ++rank) {
    const int position = rank < encoder_ranks ? rank % e.pp : e.pp + (rank - encoder_ranks) % l.pp;
    const int warmup = std::min(depth - position, slots);
    auto& rank_order = order[static_cast<std::size_t>(rank)];
    for (int k = 0; k < warmup; ++k) rank_order.push_back(index(rank, k, false));
    for (int k = 0; k < slots; ++k) {
      rank_order.push_back(index(rank, k, true));
      if (warmup + k < slots) rank_order.push_back(index(rank, warmup + k, false));
    }
  }
  const dip::StageSchedule schedule = dip::time_stage_orders(graph, order);
  TimeNs makespan = schedule.makespan;
  // Each stage's gradients are all-reduced over its component's replicas once their last backward
  // passes are done, or (overlap_grad_reduce) bucket by bucket while the last of them runs: then
  // the reduction ends no sooner than an all-reduce started with that last pass.
  const Bytes gradient_bytes = costs.scenario().stack.gradient_bytes(costs.scenario().training.dtype);
  auto reduce = [&](bool llm, const ModuleLayout& layout, const std::vector<int>& layers, int first) {
    if (layout.dp == 1) return;
    for (int r = 0; r < layout.pp; ++r) {
      std::int64_t trained = 0;
      for (int layer = first; layer < first + layers[static_cast<std::size_t>(r)]; ++layer)
        trained += costs.at_tp(layout.tp).in_stage(layer, {pad_to, 1, 0.0, 0.0}).trained;
      first += layers[static_cast<std::size_t>(r)];
      TimeNs last_start = 0, last_end = 0;
      for (int g = 0; g < layout.dp; ++g) {
        const std::size_t last = order[static_cast<std::size_t>(rank_of(llm, g, r))].back();
        last_start = std::max(last_start, schedule.start[last]);
        last_end = std::max(last_end, schedule.end[last]);
      }
      const TimeNs reduction = costs.gradient_reduce_time(layout.tp, layout.dp, r, trained * gradient_bytes);
      const TimeNs from = costs.scenario().options.overlap_grad_reduce ? last_start : last_end;
      makespan = std::max({makespan, last_end, from + reduction});
    }
  };
  reduce(false, e, stages.encoder, encoder_first);
  reduce(true, l, stages.llm, llm_first);
  return makespan;
}

ItemDurations observed_durations(ModelCosts& costs, const DflopPlan& plan, const StageLayers& stages,
                                 std::span<const SampleShape> samples, std::int64_t pad_to,
                                 std::span<const double> delays) {
  // The costliest stage of each component: the first of its most layers.
  auto costliest = [](const std::vector<int>& layers, int first) {
    const auto most = std::max_element(layers.begin(), layers.end());
    const int start = first + std::accumulate(layers.begin(), most, 0);
    return std::pair{start, start + *most};
  };
  const auto [e_first, e_end] = costliest(stages.encoder, costs.layer_range(Component::encoder).first);
  const auto [l_first, l_end] = costliest(stages.llm, costs.layer_range(Component::llm).first);
  const std::int64_t images = std::max<std::int64_t>(1, std::llround(plan.images_per_microbatch));
  const std::int64_t tokens = padded(std::max<std::int64_t>(1, std::llround(plan.tokens_per_microbatch)), pad_to);
  const PassTimes encoder = encoder_stage(costs, plan.encoder.tp, e_first, e_end - e_first, images, pad_to);
  dip::LayerCosts& llm = costs.at_tp(plan.llm.tp);
  TimeNs linear = 0;
  for (int layer = l_first; layer < l_end; ++layer) {
    const LayerSplit split = split_layer(llm.in_stage(layer, {tokens, 0, 0.0, 0.0}), costs.policy());
    linear += split.forward + split.backward;
  }
  const double per_image = static_cast<double>(encoder.forward + encoder.backward) / kNsPerSecond /
                           static_cast<double>(images) * plan.llm.dp / plan.encoder.dp;
  const double per_token = static_cast<double>(linear) / kNsPerSecond / static_cast<double>(tokens);
  ItemDurations out;
  for (std::size_t i = 0; i < samples.size(); ++i) {
    out.encoder.push_back(per_image * static_cast<double>(samples[i].images));
    double seconds = per_token * static_cast<double>(samples[i].seq_len);
    if (samples[i].seq_len > 0) {
      const LayerSplit split =
          split_layer(llm.in_stage(l_first, {padded(samples[i].seq_len, pad_to), 0, 0.0, 0.0}), costs.policy());
      seconds +=
          static_cast<double>((l_end - l_first) * (split.attention_forward + split.attention_backward)) / kNsPerSecond;
    }
    out.llm.push_back(seconds + (delays.empty() ? 0.0 : delays[i]));
  }
  return out;
}

}  // namespace weft::dflop
