#pragma once

// The builder's pass templates as they are recorded and placed (training_graph_builder.hpp),
// defined apart for the passes that emit them (training_passes.cpp).

#include <tuple>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "simulator/workload/training_graph_builder.hpp"

namespace weft::training_graph {

template <class Body>
PerPeer<OpId> TrainingGraphBuilder::emit_pass(int stage, const Chunk& chunk, std::string_view phase, int mb,
                                              PassValues inputs, PassValues& escapes, BundleSet& bundles, Body&& body) {
  boost::container::small_vector<Route, kRouteCount> taken;
  for (std::size_t r = 0; r < kRouteCount; ++r) {
    if (!bundles[r].empty() && phase_taking(static_cast<Route>(r)) == phase) {
      taken.push_back(static_cast<Route>(r));
      inputs.push_back(bundles[r]);
    }
  }
  const RecordedPass& pass = pass_template(stage, chunk, phase, inputs, [&](std::vector<PassBundle>& leaving) {
    for (Route route : taken) {
      recorder_->take_bundle(bundles[static_cast<std::size_t>(route)], bundle_shape(chunk, route));
    }
    return body(leaving);
  });
  PassValues left;
  const PerPeer<OpId> ops = instantiate(stage, chunk, pass, phase, mb, inputs, escapes, left);
  for (std::size_t b = 0; b < pass.pass.bundles.size(); ++b) bundles[pass.pass.bundles[b].route] = std::move(left[b]);
  return ops;
}

template <class Body>
const TrainingGraphBuilder::RecordedPass& TrainingGraphBuilder::pass_template(int stage, const Chunk& chunk,
                                                                              std::string_view phase,
                                                                              const PassValues& inputs, Body&& body) {
  const auto key =
      std::make_tuple(chunk.shape, phase, stage_pace_[static_cast<std::size_t>(stage)], contention_key(stage, chunk));
  if (auto it = pass_templates_.find(key); it != pass_templates_.end()) return it->second;
  auto [specs, devices] = recording_devices(stage);
  PassRecorder recorder(fmt::format("{} chunk {}", phase, chunk.group), specs, devices, outer_, member_handles_,
                        &layer_templates_);
  recording_peers_ = stages_[static_cast<std::size_t>(stage)];
  for (Peer& peer : recording_peers_) {
    peer.device = recorder.device(peer.index);
    peer.compute = peer.tensor_parallel = peer.data_parallel = peer.context_parallel = StreamId::none();
  }
  recorder_ = &recorder;
  recording_stage_ = stage;
  b_ = &recorder.builder();
  std::vector<PassBundle> leaving;
  const PassValues escapes = body(leaving);
  b_ = &outer_;
  recorder_ = nullptr;
  RecordedPass made{stage, std::move(recorder).finish(outer_, inputs, escapes, leaving)};
  return pass_templates_.emplace(key, std::move(made)).first->second;
}

}  // namespace weft::training_graph
