#include "simulator/planner/entrain/entrain_schedule.hpp"

#include <algorithm>
#include <utility>

#include "simulator/core/input_error.hpp"
#include "simulator/planner/dip/module_segments.hpp"

namespace weft::entrain {
namespace {

using dip::LayerCost;
using dip::PipelineStage;

// An encoder microbatch's samples that go, as one unit of the encoder's backward pass, to the
// LLM positions in `destinations` (one, with split backward).
struct EncoderPart {
  int position = 0;
  SampleSet samples;
  std::vector<int> destinations;
  SampleShape shape;
};

struct StageCost {
  TimeNs forward = 0;
  TimeNs backward = 0;
  Bytes memory = 0;
};

class ReplicaBuilder {
 public:
  ReplicaBuilder(dip::LayerCosts& costs, dip::LayerPolicy policy, const ComponentPipeline& pipeline)
      : costs_(costs), policy_(policy) {
    int first = 0;
    for (const auto* component : {&pipeline.encoder_stages, &pipeline.llm_stages}) {
      for (const int layers : *component) {
        first_.push_back(first);
        first += layers;
        end_.push_back(first);
      }
    }
    if (first != costs.model().layer_count())
      throw InputError("entrain: the pipeline's stages hold " + std::to_string(first) + " layers of the model's " +
                       std::to_string(costs.model().layer_count()));
  }

  // What pipeline stage `k` costs a packed sequence of `shape`; nothing for a layer whose module
  // it gives no tokens.
  StageCost cost(int k, const SampleShape& shape) {
    StageCost out;
    for (int layer = first_[static_cast<std::size_t>(k)]; layer < end_[static_cast<std::size_t>(k)]; ++layer) {
      if (!feeds(layer, shape)) continue;
      const LayerCost& c = costs_.in_stage(layer, shape);
      out.forward += c.forward;
      out.backward += c.latency(policy_) - c.forward;
      out.memory += c.memory(policy_);
    }
    return out;
  }

  // How long the input of stage `k` (forward), or its gradient (backward), takes from rank `from`
  // to rank `to` for a packed sequence of `shape`.
  TimeNs transfer(int from, int to, int k, const SampleShape& shape) {
    const int layer = first_[static_cast<std::size_t>(k)];
    const Bytes bytes = feeds(layer, shape) ? std::max<Bytes>(1, costs_.in_stage(layer, shape).input) : 1;
    return costs_.transfer_time(from, to, bytes);
  }

  std::size_t add(int rank, bool backward, TimeNs duration, Bytes memory, std::size_t frees) {
    PipelineStage stage;
    stage.rank = rank;
    stage.backward = backward;
    stage.duration = duration;
    stage.memory = memory;
    stage.frees = frees;
    stages.push_back(std::move(stage));
    return stages.size() - 1;
  }

  void depend(std::size_t stage, std::size_t on, TimeNs arrival) {
    stages[stage].predecessors.push_back(on);
    stages[stage].arrival.push_back(arrival);
  }

  std::vector<PipelineStage> stages;

 private:
  bool feeds(int layer, const SampleShape& shape) const {
    return dip::module_items(costs_.model().spec().modules[costs_.module_of(layer)], shape) > 0;
  }

  dip::LayerCosts& costs_;
  dip::LayerPolicy policy_;
  std::vector<int> first_;
  std::vector<int> end_;
};

// Per position, the encoder's parts: one per LLM position its samples go to (split backward), or
// the whole microbatch.
std::vector<EncoderPart> encoder_parts(std::span<const SampleShape> samples, std::span<const SampleSet> encoder,
                                       std::span<const SampleSet> llm, std::int64_t pad_to, bool split) {
  std::vector<int> llm_position(samples.size(), -1);
  for (std::size_t m = 0; m < llm.size(); ++m) {
    for (const std::size_t s : llm[m]) llm_position[s] = static_cast<int>(m);
  }
  std::vector<EncoderPart> parts;
  for (std::size_t m = 0; m < encoder.size(); ++m) {
    std::vector<int> destinations;
    for (const std::size_t s : encoder[m]) {
      if (llm_position[s] < static_cast<int>(m))
        throw InputError("entrain: a sample's LLM work runs before its encoder work");
      destinations.push_back(llm_position[s]);
    }
    std::sort(destinations.begin(), destinations.end());
    destinations.erase(std::unique(destinations.begin(), destinations.end()), destinations.end());
    auto add_part = [&](SampleSet set, std::vector<int> to) {
      if (set.empty()) return;
      const SampleShape shape = packed_shape(samples, set, pad_to);
      parts.push_back({static_cast<int>(m), std::move(set), std::move(to), shape});
    };
    if (!split) {
      add_part(encoder[m], destinations);
      continue;
    }
    for (const int d : destinations) {
      SampleSet set;
      for (const std::size_t s : encoder[m]) {
        if (llm_position[s] == d) set.push_back(s);
      }
      add_part(std::move(set), {d});
    }
  }
  return parts;
}

// 1F1B over slots: `warmup` forward slots, then one backward and one forward slot in turn, then the
// backward slots left.
std::vector<std::size_t> one_f_one_b(const std::vector<std::vector<std::size_t>>& forward,
                                     const std::vector<std::vector<std::size_t>>& backward, std::size_t warmup) {
  std::vector<std::size_t> order;
  auto append = [&](const std::vector<std::size_t>& slot) { order.insert(order.end(), slot.begin(), slot.end()); };
  for (std::size_t f = 0; f < warmup; ++f) append(forward[f]);
  for (std::size_t b = 0; b < backward.size(); ++b) {
    append(backward[b]);
    if (warmup + b < forward.size()) append(forward[warmup + b]);
  }
  return order;
}

}  // namespace

SampleShape packed_shape(std::span<const SampleShape> samples, const SampleSet& set, std::int64_t pad_to) {
  SampleShape out;
  for (const std::size_t s : set) {
    out.seq_len += samples[s].seq_len;
    out.images += samples[s].images;
  }
  out.seq_len = (out.seq_len + pad_to - 1) / pad_to * pad_to;
  return out;
}

ReplicaTimeline time_replica(dip::LayerCosts& costs, dip::LayerPolicy policy, std::span<const SampleShape> samples,
                             const ComponentPipeline& pipeline, std::span<const SampleSet> encoder,
                             std::span<const SampleSet> llm, std::int64_t pad_to, const PipelineRun& run) {
  if (encoder.size() != llm.size()) throw InputError("entrain: as many LLM microbatches as encoder ones");
  ReplicaBuilder build(costs, policy, pipeline);
  const auto encoder_ranks = static_cast<int>(pipeline.encoder_stages.size());
  const auto llm_ranks = static_cast<int>(pipeline.llm_stages.size());
  const std::size_t positions = encoder.size();
  constexpr std::size_t kNone = PipelineStage::kNone;
  const std::vector<EncoderPart> parts = encoder_parts(samples, encoder, llm, pad_to, run.split_backward);

  ReplicaTimeline out;
  out.encoder_forward.assign(positions, 0.0);
  out.llm_forward.assign(positions, 0.0);
  const auto ranks = static_cast<std::size_t>(pipeline.ranks());
  // Per rank: its forward and backward slots, by position.
  std::vector<std::vector<std::vector<std::size_t>>> forward_slots(ranks,
                                                                   std::vector<std::vector<std::size_t>>(positions));
  std::vector<std::vector<std::vector<std::size_t>>> backward_slots = forward_slots;
  std::vector<std::vector<Bytes>> slot_memory(ranks, std::vector<Bytes>(positions, 0));

  // The encoder's forward pass runs whole: a microbatch's first part takes the whole microbatch's
  // time, the others none, each holding its own activations until its backward part frees them.
  std::vector<std::vector<std::size_t>> part_forward(parts.size());
  for (std::size_t p = 0; p < parts.size(); ++p) {
    const auto m = static_cast<std::size_t>(parts[p].position);
    const bool first_part = p == 0 || parts[p - 1].position != parts[p].position;
    const SampleShape whole = packed_shape(samples, encoder[m], pad_to);
    for (int e = 0; e < encoder_ranks; ++e) {
      const TimeNs forward = first_part ? build.cost(e, whole).forward : 0;
      const Bytes memory = build.cost(e, parts[p].shape).memory;
      const std::size_t stage = build.add(e, false, forward, memory, kNone);
      if (e > 0) build.depend(stage, part_forward[p].back(), build.transfer(e - 1, e, e, parts[p].shape));
      part_forward[p].push_back(stage);
      forward_slots[static_cast<std::size_t>(e)][m].push_back(stage);
      slot_memory[static_cast<std::size_t>(e)][m] += memory;
      out.encoder_forward[m] += static_cast<double>(forward) / kNsPerSecond;
    }
  }
  std::vector<std::vector<std::size_t>> llm_forward(positions);
  std::vector<std::vector<std::size_t>> llm_backward(positions,
                                                     std::vector<std::size_t>(static_cast<std::size_t>(llm_ranks)));
  for (std::size_t m = 0; m < positions; ++m) {
    const SampleShape shape = packed_shape(samples, llm[m], pad_to);
    std::vector<StageCost> costs_of;
    for (int q = 0; q < llm_ranks; ++q) {
      const int rank = encoder_ranks + q;
      const StageCost cost = llm[m].empty() ? StageCost{} : build.cost(rank, shape);
      costs_of.push_back(cost);
      const std::size_t stage = build.add(rank, false, cost.forward, cost.memory, kNone);
      if (q > 0) {
        build.depend(stage, llm_forward[m].back(), build.transfer(rank - 1, rank, rank, shape));
      } else {
        for (std::size_t p = 0; p < parts.size(); ++p) {
          const std::vector<int>& to = parts[p].destinations;
          if (std::find(to.begin(), to.end(), static_cast<int>(m)) != to.end())
            build.depend(stage, part_forward[p].back(), build.transfer(rank - 1, rank, rank, parts[p].shape));
        }
      }
      llm_forward[m].push_back(stage);
      forward_slots[static_cast<std::size_t>(rank)][m].push_back(stage);
      slot_memory[static_cast<std::size_t>(rank)][m] += cost.memory;
      out.llm_forward[m] += static_cast<double>(cost.forward) / kNsPerSecond;
    }
    for (int q = llm_ranks - 1; q >= 0; --q) {
      const int rank = encoder_ranks + q;
      const auto at = static_cast<std::size_t>(q);
      const std::size_t stage = build.add(rank, true, costs_of[at].backward, 0, llm_forward[m][at]);
      if (q == llm_ranks - 1) {
        build.depend(stage, llm_forward[m][at], 0);
      } else {
        build.depend(stage, llm_backward[m][at + 1], build.transfer(rank + 1, rank, rank + 1, shape));
      }
      llm_backward[m][at] = stage;
      backward_slots[static_cast<std::size_t>(rank)][m].push_back(stage);
    }
  }
  for (std::size_t p = 0; p < parts.size(); ++p) {
    const auto slot = static_cast<std::size_t>(parts[p].destinations.back());
    std::size_t after = kNone;
    for (int e = encoder_ranks - 1; e >= 0; --e) {
      const StageCost cost = build.cost(e, parts[p].shape);
      const std::size_t stage = build.add(e, true, cost.backward, 0, part_forward[p][static_cast<std::size_t>(e)]);
      if (e == encoder_ranks - 1) {
        for (const int d : parts[p].destinations)
          build.depend(stage, llm_backward[static_cast<std::size_t>(d)][0],
                       build.transfer(e + 1, e, e + 1, parts[p].shape));
      } else {
        build.depend(stage, after, build.transfer(e + 1, e, e + 1, parts[p].shape));
      }
      after = stage;
      backward_slots[static_cast<std::size_t>(e)][slot].push_back(stage);
    }
  }

  std::vector<std::vector<std::size_t>> orders(ranks);
  std::size_t upstream = positions;
  for (std::size_t r = 0; r < ranks; ++r) {
    std::size_t warmup = std::min(positions, ranks - r);
    if (run.eager_forward && positions > 0) {
      const Bytes largest = *std::max_element(slot_memory[r].begin(), slot_memory[r].end());
      const Bytes limit = r < run.activation_limit.size() ? run.activation_limit[r] : 0;
      std::size_t fits = largest == 0 ? positions : limit > 0 ? static_cast<std::size_t>(limit / largest) : 0;
      // A rank warms up with fewer forwards than the one before it, unless that one runs all of them
      // first: else its first backward pass would wait for a forward pass that waits for it.
      if (r > 0 && upstream < positions) fits = std::min(fits, upstream - 1);
      warmup = std::clamp(fits, warmup, positions);
    }
    upstream = warmup;
    orders[r] = one_f_one_b(forward_slots[r], backward_slots[r], warmup);
  }
  out.schedule = dip::time_stage_orders(build.stages, orders);
  out.stages = std::move(build.stages);
  return out;
}

}  // namespace weft::entrain
