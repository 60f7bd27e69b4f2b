#include "simulator/planner/dip/module_segments.hpp"

#include <algorithm>
#include <string>

#include "simulator/core/input_error.hpp"
#include "simulator/planner/dip/modality_partition.hpp"

namespace weft::dip {
namespace {

struct ModuleWork {
  double seconds = 0.0;
  double flops = 0.0;
};

// The forward and backward passes of a module's layers for one sub-microbatch, keeping everything.
ModuleWork module_work(LayerCosts& costs, const ModuleSegments& segments, const SampleShape& shape) {
  ModuleWork work;
  for (int layer = segments.first_layer; layer < segments.first_layer + segments.layers; ++layer) {
    const LayerCost& cost = costs.at(layer, shape);
    work.seconds += static_cast<double>(cost.latency(LayerPolicy::keep)) / kNsPerSecond;
    work.flops += cost.training_flops;
  }
  return work;
}

int efficient_sub_microbatch(LayerCosts& costs, const ModuleSegments& segments, const ModuleSpec& spec,
                             const SegmentOptions& options) {
  std::vector<std::pair<int, double>> efficiency;
  for (int size = 1; size <= options.max_sub_microbatch; ++size) {
    const ModuleWork work = module_work(costs, segments, sub_microbatch_shape(spec, {}, size));
    if (work.seconds > 0.0 && work.flops > 0.0) efficiency.emplace_back(size, work.flops / work.seconds);
  }
  return smallest_efficient_size(efficiency);
}

double mean_latency(LayerCosts& costs, const ModuleSegments& segments, const ModuleSpec& spec,
                    std::span<const SampleShape> shapes) {
  double total = 0.0;
  int counted = 0;
  for (const SampleShape& shape : shapes) {
    if (module_items(spec, shape) == 0) continue;
    total += module_work(costs, segments, sub_microbatch_shape(spec, shape, 1)).seconds;
    ++counted;
  }
  return counted == 0 ? 0.0 : total / counted;
}

}  // namespace

int ModuleSegments::chunk_first_layer(int chunk) const {
  int first = first_layer;
  for (int c = 0; c < chunk; ++c) first += chunk_layers[static_cast<std::size_t>(c)];
  return first;
}

std::int64_t module_items(const ModuleSpec& module, const SampleShape& shape) {
  if (module.tokens == TokenSource::images) return shape.images;
  return module_tokens(module, shape) > 0 ? 1 : 0;
}

SampleShape sub_microbatch_shape(const ModuleSpec& module, const SampleShape& shape, std::int64_t items) {
  switch (module.tokens) {
    case TokenSource::text:
      return {shape.seq_len, 0, 0.0, 0.0};
    case TokenSource::images:
      return {0, items, 0.0, 0.0};
    case TokenSource::video:
      return {0, 0, shape.video_seconds, 0.0, shape.video_square_seconds, 0.0};
    case TokenSource::audio:
      break;
  }
  return {0, 0, 0.0, shape.audio_seconds, 0.0, shape.audio_square_seconds};
}

std::vector<ModuleSegments> plan_module_segments(LayerCosts& costs, std::span<const SampleShape> shapes,
                                                 const SegmentOptions& options) {
  const MultimodalSpec& spec = costs.model().spec();
  std::vector<ModuleSegments> modules;
  std::vector<double> latencies;
  for (std::size_t m = 0; m < spec.modules.size(); ++m) {
    const ModuleSpec& module = spec.modules[m];
    if (module.layers() == 0) continue;
    const std::string where = "model.modules[" + std::to_string(m) + "] (" + module.name + ")";
    if (module.layers() < options.pp) {
      throw InputError(where + ": " + std::to_string(module.layers()) + " layers cannot spread over pp " +
                       std::to_string(options.pp) + " ranks");
    }
    ModuleSegments segments;
    segments.module = m;
    segments.first_layer = spec.first_layer(m);
    segments.layers = module.layers();
    segments.backward = !module.frozen || spec.trainable_upstream(m);
    if (module.tokens == TokenSource::images) {
      segments.sub_microbatch = options.sub_microbatch > 0 ? options.sub_microbatch
                                                           : efficient_sub_microbatch(costs, segments, module, options);
      segments.latency_s =
          module_work(costs, segments, sub_microbatch_shape(module, {}, segments.sub_microbatch)).seconds;
    } else {
      segments.latency_s = mean_latency(costs, segments, module, shapes);
    }
    modules.push_back(std::move(segments));
  }
  // A module no microbatch gives tokens has no stages; it counts as the fastest (one segment).
  double fastest = 0.0;
  for (const ModuleSegments& segments : modules) {
    if (segments.latency_s > 0.0 && (fastest == 0.0 || segments.latency_s < fastest)) fastest = segments.latency_s;
  }
  if (fastest == 0.0) throw InputError("data: no microbatch gives any module tokens");
  for (const ModuleSegments& segments : modules)
    latencies.push_back(segments.latency_s > 0.0 ? segments.latency_s : fastest);
  const std::vector<int> counts = segment_counts(latencies);
  for (std::size_t m = 0; m < modules.size(); ++m) {
    ModuleSegments& segments = modules[m];
    segments.segments = std::min(counts[m], segments.layers / options.pp);
    segments.chunk_layers = chunk_layers(segments.layers, options.pp, segments.segments);
  }
  return modules;
}

}  // namespace weft::dip
