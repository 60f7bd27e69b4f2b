#include "simulator/workload/training_graph_builder.hpp"

#include <algorithm>
#include <stdexcept>

namespace weft::training_graph {

std::string_view TrainingGraphBuilder::phase_taking(Route route) {
  switch (route) {
    case Route::forward_to_backward:
    case Route::recompute_to_backward:
      return "bwd";
    case Route::forward_to_recompute:
      return "recompute";
    case Route::forward_to_weight:
    case Route::recompute_to_weight:
    case Route::backward_to_weight:
      return "weight";
  }
  return {};
}

std::string_view TrainingGraphBuilder::phase_leaving(Route route) {
  switch (route) {
    case Route::forward_to_backward:
    case Route::forward_to_recompute:
    case Route::forward_to_weight:
      return "fwd";
    case Route::recompute_to_backward:
    case Route::recompute_to_weight:
      return "recompute";
    case Route::backward_to_weight:
      return "bwd";
  }
  return {};
}

const PassTemplate::BundleShape& TrainingGraphBuilder::bundle_shape(const Chunk& chunk, Route route) const {
  const PassTemplate* from = any_pass_template(chunk.shape, phase_leaving(route));
  if (from == nullptr) throw std::logic_error("no template of the pass leaving the bundle");
  for (const PassTemplate::BundleShape& shape : from->bundles) {
    if (shape.route == static_cast<std::uint32_t>(route)) return shape;
  }
  throw std::logic_error("no bundle on the route asked for");
}

std::uint32_t TrainingGraphBuilder::leave(std::vector<PassBundle>& leaving, Route route, std::uint32_t key,
                                          const PerPeer<TensorId>& value) {
  if (value.empty()) return key;
  auto bundle = std::find_if(leaving.begin(), leaving.end(),
                             [&](const PassBundle& b) { return b.route == static_cast<std::uint32_t>(route); });
  if (bundle == leaving.end()) {
    bundle = leaving.insert(leaving.end(), PassBundle{static_cast<std::uint32_t>(route), {}});
    bundle->members.resize(value.size());
  }
  const auto& first_peer = bundle->members.front();
  auto known = std::find_if(first_peer.begin(), first_peer.end(), [&](const auto& m) { return m.second == value[0]; });
  if (known != first_peer.end()) return known->first;
  for (std::size_t peer = 0; peer < value.size(); ++peer) bundle->members[peer].emplace_back(key, value[peer]);
  return key;
}

Route TrainingGraphBuilder::route_of_saved(const Chunk& chunk, std::size_t k, Route to_backward) const {
  const bool to_weight = split_weight_grads_ && chunk.steps[k].weight_grad;
  if (!to_weight) return to_backward;
  return to_backward == Route::forward_to_backward ? Route::forward_to_weight : Route::recompute_to_weight;
}

Route TrainingGraphBuilder::route_of_checkpoint(const Chunk& chunk, std::size_t k) const {
  const bool own_pass =
      recomputes_before_gradient(chunk) && recompute_group(chunk, k) == recompute_group(chunk, chunk.steps.size() - 1);
  return own_pass ? Route::forward_to_recompute : Route::forward_to_backward;
}

std::vector<PerPeer<TensorId>> TrainingGraphBuilder::member_handles(const Chunk& chunk, std::string_view phase,
                                                                    Kept what) {
  std::vector<PerPeer<TensorId>> handles(chunk.steps.size());
  const PassTemplate* pass = any_pass_template(chunk.shape, phase);
  if (pass == nullptr) return handles;
  for (const PassTemplate::BundleShape& shape : pass->bundles) {
    for (std::size_t peer = 0; peer < shape.members.size(); ++peer) {
      for (const auto& [key, kind, bytes] : shape.members[peer]) {
        if (key % 4 != static_cast<std::uint32_t>(what)) continue;
        handles[key / 4].push_back(member_handles_.handle(key, static_cast<std::uint32_t>(peer)));
      }
    }
  }
  return handles;
}

const PassTemplate* TrainingGraphBuilder::any_pass_template(std::size_t shape, std::string_view phase) const {
  const auto it = pass_templates_.lower_bound(std::make_tuple(shape, phase, 0, std::uint64_t{0}));
  const bool found = it != pass_templates_.end() && std::get<0>(it->first) == shape && std::get<1>(it->first) == phase;
  return found ? &it->second.pass : nullptr;
}

const TrainingGraphBuilder::StageTranslation& TrainingGraphBuilder::translation(int from, int to) {
  auto [it, made] = translations_.try_emplace({from, to});
  if (!made) return it->second;
  const auto& from_peers = stages_[static_cast<std::size_t>(from)];
  const auto& to_peers = stages_[static_cast<std::size_t>(to)];
  for (std::size_t i = 0; i < from_peers.size(); ++i) {
    for (Lane lane :
         {Lane::compute, Lane::tensor_parallel, Lane::data_parallel, Lane::context_parallel, Lane::shard_replicas}) {
      if (lane == Lane::shard_replicas && !s_.parallel.hybrid_sharding()) continue;  // no such stream
      it->second.streams.emplace(outer_lane_stream(from_peers[i], lane), outer_lane_stream(to_peers[i], lane));
    }
    it->second.devices.emplace(from_peers[i].device, to_peers[i].device);
  }
  return it->second;
}

PerPeer<OpId> TrainingGraphBuilder::instantiate(int stage, const Chunk& chunk, const RecordedPass& recorded,
                                                std::string_view phase, int mb, const PassValues& inputs,
                                                PassValues& escapes, PassValues& bundles) {
  const PassTemplate& pass = recorded.pass;
  PassTemplate::Placement placement{pass.streams, {}};
  if (recorded.stage != stage) {
    const StageTranslation& moved = translation(recorded.stage, stage);
    placed_streams_.clear();
    for (StreamId stream : pass.streams) placed_streams_.push_back(moved.streams.at(stream));
    placed_devices_.clear();
    for (const PassTemplate::OutputShape& output : pass.outputs)
      placed_devices_.push_back(moved.devices.at(output.device));
    placement = {placed_streams_, placed_devices_};
  }
  const OpId op =
      pass.instantiate(outer_, name("chunk {} mb{} {}", chunk.group, mb, phase), inputs, escapes, bundles, placement);
  // The pass as a schedule names it; a recompute pass goes with the backward pass it precedes.
  const PassKind kind = phase == "fwd" ? PassKind::forward : phase == "weight" ? PassKind::weight : PassKind::backward;
  passes_.push_back({op,
                     position_of(stage),
                     replica_of(stage),
                     {kind, mb, static_cast<int>(chunk_index(chunk))},
                     phase == "recompute"});
  const PerPeer<OpId> ops(stages_[static_cast<std::size_t>(stage)].size(), op);
  last_compute_ops_ = ops;
  if (!pass.signals.empty()) {
    std::vector<PerPeer<Gate>>& last = last_grad_gates(chunk);
    for (const auto& [step, signals] : pass.signals) {
      PerPeer<Gate>& gates = last[step];
      gates.clear();
      for (std::uint32_t signal : signals) gates.push_back({op, static_cast<std::int32_t>(signal)});
    }
  }
  return ops;
}

ForwardRecord TrainingGraphBuilder::forward_handles(const Chunk& chunk) {
  ForwardRecord handles;
  handles.saved = member_handles(chunk, "fwd", Kept::saved);
  handles.checkpoint = member_handles(chunk, "fwd", Kept::checkpoint);
  return handles;
}

PerPeer<TensorId> TrainingGraphBuilder::handles_of(std::uint32_t key, std::size_t peers) {
  PerPeer<TensorId> handles;
  for (std::size_t peer = 0; peer < peers; ++peer)
    handles.push_back(member_handles_.handle(key, static_cast<std::uint32_t>(peer)));
  return handles;
}

}  // namespace weft::training_graph
