#include "simulator/planner/dip/stage_flows.hpp"

#include <algorithm>
#include <numeric>

#include "simulator/planner/dip/modality_partition.hpp"

namespace weft::dip {
namespace {

// The transformer modules `module` reads, through projectors.
std::vector<std::size_t> upstream_modules(const MultimodalSpec& spec, std::size_t module) {
  std::vector<std::size_t> out;
  for (std::size_t input : spec.modules[module].inputs) {
    if (spec.modules[input].projector) {
      for (std::size_t m : upstream_modules(spec, input)) out.push_back(m);
    } else {
      out.push_back(input);
    }
  }
  return out;
}

std::size_t add_stage(StageFlows& flows, int rank, bool backward, const StageWork& work, int group,
                      std::vector<std::size_t> predecessors) {
  PipelineStage stage;
  stage.rank = rank;
  stage.backward = backward;
  stage.predecessors = std::move(predecessors);
  flows.stages.push_back(std::move(stage));
  flows.work.push_back(work);
  flows.group.push_back(group);
  return flows.stages.size() - 1;
}

// How long each stage's inputs from other ranks take to arrive: a forward stage's input, or the
// gradient of the input of the backward stage it follows (what the execution plan sends).
void set_arrivals(StageFlows& flows, LayerCosts& costs) {
  for (std::size_t v = 0; v < flows.stages.size(); ++v) {
    PipelineStage& stage = flows.stages[v];
    stage.arrival.assign(stage.predecessors.size(), 0);
    for (std::size_t k = 0; k < stage.predecessors.size(); ++k) {
      const std::size_t u = stage.predecessors[k];
      if (flows.stages[u].rank == stage.rank) continue;
      const StageWork& work = flows.work[flows.stages[u].backward ? u : v];
      const Bytes bytes = std::max<Bytes>(1, costs.in_stage(work.first_layer, work.shape).input);
      stage.arrival[k] = costs.transfer_time(flows.stages[u].rank, stage.rank, bytes);
    }
  }
}

int add_group(StageFlows& flows, int microbatch, std::size_t module, std::vector<int> follows) {
  flows.group_microbatch.push_back(microbatch);
  flows.group_module.push_back(module);
  flows.follows.push_back(std::move(follows));
  return static_cast<int>(flows.follows.size()) - 1;
}

// The stages of one module for one microbatch: per sub-microbatch, its forward stages chunk by
// chunk and its backward stages from the last chunk back.
struct ModuleStages {
  int group = -1;
  std::vector<std::vector<std::size_t>> forward;   // per sub-microbatch, per chunk
  std::vector<std::vector<std::size_t>> backward;  // per sub-microbatch, per chunk (empty without)
};

std::vector<std::size_t> last_forwards(const ModuleStages& stages) {
  std::vector<std::size_t> out;
  for (const auto& chain : stages.forward) out.push_back(chain.back());
  return out;
}

}  // namespace

TimeNs StageFlows::busy() const {
  TimeNs total = 0;
  for (const PipelineStage& stage : stages) total += stage.duration;
  return total;
}

void apply_layer_policy(StageFlows& flows, LayerCosts& costs, std::span<const LayerPolicy> policy) {
  std::vector<std::uint8_t> freed(flows.stages.size(), 0);
  for (const PipelineStage& stage : flows.stages) {
    if (stage.frees != PipelineStage::kNone) freed[stage.frees] = 1;
  }
  for (std::size_t i = 0; i < flows.stages.size(); ++i) {
    PipelineStage& stage = flows.stages[i];
    const StageWork& work = flows.work[i];
    stage.duration = 0;
    stage.memory = 0;
    for (int layer = work.first_layer; layer < work.end_layer; ++layer) {
      const LayerCost& cost = costs.in_stage(layer, work.shape);
      const LayerPolicy chosen = policy[static_cast<std::size_t>(layer)];
      stage.duration += stage.backward ? cost.latency(chosen) - cost.forward : cost.forward;
      if (!stage.backward && freed[i] != 0) stage.memory += cost.memory(chosen);
    }
  }
}

StageFlows build_dip_flows(std::span<const ModuleSegments> modules, std::span<const SampleShape> shapes, int pp,
                           LayerCosts& costs, std::span<const LayerPolicy> policy) {
  const MultimodalSpec& spec = costs.model().spec();
  StageFlows flows;
  flows.ranks = pp;
  std::vector<std::size_t> segment_of(spec.modules.size(), modules.size());
  for (std::size_t s = 0; s < modules.size(); ++s) segment_of[modules[s].module] = s;
  for (int mb = 0; mb < static_cast<int>(shapes.size()); ++mb) {
    const SampleShape& shape = shapes[static_cast<std::size_t>(mb)];
    std::vector<ModuleStages> built(modules.size());
    for (std::size_t s = 0; s < modules.size(); ++s) {
      const ModuleSegments& segments = modules[s];
      const ModuleSpec& module = spec.modules[segments.module];
      const std::int64_t items = module_items(module, shape);
      if (items == 0) continue;
      std::vector<std::size_t> ready;  // the last forward stages of the modules it reads
      std::vector<int> follows;
      for (std::size_t m : upstream_modules(spec, segments.module)) {
        const ModuleStages& upstream = built[segment_of[m]];
        if (upstream.group < 0) continue;
        follows.push_back(upstream.group);
        for (std::size_t stage : last_forwards(upstream)) ready.push_back(stage);
      }
      ModuleStages& stages = built[s];
      stages.group = add_group(flows, mb, segments.module, std::move(follows));
      const std::vector<int> sizes = segments.sub_microbatch > 0 ? sub_microbatch_sizes(items, segments.sub_microbatch)
                                                                 : std::vector<int>{static_cast<int>(items)};
      const int chunks = static_cast<int>(segments.chunk_layers.size());
      for (std::size_t sub = 0; sub < sizes.size(); ++sub) {
        StageWork work{
            mb, segments.module, static_cast<int>(sub), 0, 0, 0, sub_microbatch_shape(module, shape, sizes[sub])};
        std::vector<std::size_t> chain;
        for (int chunk = 0; chunk < chunks; ++chunk) {
          work.chunk = chunk;
          work.first_layer = segments.chunk_first_layer(chunk);
          work.end_layer = work.first_layer + segments.chunk_layers[static_cast<std::size_t>(chunk)];
          chain.push_back(add_stage(flows, chunk % pp, false, work, stages.group,
                                    chunk == 0 ? ready : std::vector<std::size_t>{chain.back()}));
        }
        stages.forward.push_back(std::move(chain));
      }
    }
    // Backward stages, downstream modules first: a module's gradients come from those reading it.
    for (std::size_t s = modules.size(); s-- > 0;) {
      ModuleStages& stages = built[s];
      if (stages.group < 0 || !modules[s].backward) continue;
      std::vector<std::size_t> ready;
      for (std::size_t d = s + 1; d < modules.size(); ++d) {
        const std::vector<std::size_t> reads = upstream_modules(spec, modules[d].module);
        if (built[d].group < 0 || std::find(reads.begin(), reads.end(), modules[s].module) == reads.end()) continue;
        if (built[d].backward.empty()) {
          for (std::size_t stage : last_forwards(built[d])) ready.push_back(stage);
        } else {
          for (const auto& chain : built[d].backward) ready.push_back(chain.back());
        }
      }
      for (const auto& forward : stages.forward) {
        std::vector<std::size_t> chain;
        for (std::size_t c = forward.size(); c-- > 0;) {
          std::vector<std::size_t> predecessors{c + 1 == forward.size() ? forward.back() : chain.back()};
          if (c + 1 == forward.size()) predecessors.insert(predecessors.end(), ready.begin(), ready.end());
          const std::size_t stage = add_stage(flows, flows.stages[forward[c]].rank, true, flows.work[forward[c]],
                                              stages.group, std::move(predecessors));
          flows.stages[stage].frees = forward[c];
          chain.push_back(stage);
        }
        stages.backward.push_back(std::move(chain));
      }
    }
  }
  set_arrivals(flows, costs);
  apply_layer_policy(flows, costs, policy);
  return flows;
}

StageFlows build_megatron_flows(std::span<const int> stage_layers, const StageGraph& graph,
                                std::span<const SampleShape> shapes, int pp, LayerCosts& costs,
                                std::span<const LayerPolicy> policy) {
  StageFlows flows;
  flows.ranks = pp;
  const int virtual_stages = static_cast<int>(stage_layers.size());
  for (int mb = 0; mb < static_cast<int>(shapes.size()); ++mb) {
    const int group = add_group(flows, mb, 0, {});
    StageWork work{mb, 0, 0, 0, 0, 0, shapes[static_cast<std::size_t>(mb)]};
    std::vector<std::size_t> forward;
    for (int v = 0; v < virtual_stages; ++v) {
      work.chunk = v;
      work.first_layer = work.end_layer;
      work.end_layer += stage_layers[static_cast<std::size_t>(v)];
      work.module = costs.module_of(work.first_layer);
      std::vector<std::size_t> after;
      for (int input : graph.inputs(v)) after.push_back(forward[static_cast<std::size_t>(input)]);
      forward.push_back(add_stage(flows, v % pp, false, work, group, std::move(after)));
    }
    // Backward stages from the last virtual stage: each after its successor's.
    std::vector<std::size_t> backward(forward.size());
    for (int v = virtual_stages; v-- > 0;) {
      const std::size_t f = forward[static_cast<std::size_t>(v)];
      const int successor = graph.successor(v);
      const std::size_t after = successor < 0 ? f : backward[static_cast<std::size_t>(successor)];
      backward[static_cast<std::size_t>(v)] = add_stage(flows, v % pp, true, flows.work[f], group, {after});
      flows.stages[backward[static_cast<std::size_t>(v)]].frees = f;
    }
  }
  set_arrivals(flows, costs);
  apply_layer_policy(flows, costs, policy);
  return flows;
}

std::vector<int> stage_priorities(const StageFlows& flows, std::span<const int> group_priorities) {
  const int modules = 1 + static_cast<int>(*std::max_element(flows.group_module.begin(), flows.group_module.end()));
  // Per microbatch, the priority of its last group (the one every other leads to).
  std::vector<int> sink(flows.group_microbatch.empty() ? 0 : flows.group_microbatch.back() + 1, 0);
  for (std::size_t g = 0; g < flows.follows.size(); ++g)
    sink[static_cast<std::size_t>(flows.group_microbatch[g])] = group_priorities[g];
  std::vector<int> out(flows.stages.size());
  for (std::size_t i = 0; i < flows.stages.size(); ++i) {
    const auto g = static_cast<std::size_t>(flows.group[i]);
    out[i] = flows.stages[i].backward ? sink[static_cast<std::size_t>(flows.group_microbatch[g])] * modules +
                                            static_cast<int>(flows.group_module[g])
                                      : group_priorities[g];
  }
  return out;
}

std::vector<int> default_group_priorities(const StageFlows& flows) {
  std::vector<int> priorities(flows.follows.size());
  std::iota(priorities.rbegin(), priorities.rend(), 1);
  return priorities;
}

}  // namespace weft::dip
