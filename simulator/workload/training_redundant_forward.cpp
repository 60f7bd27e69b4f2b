#include "simulator/workload/training_graph_builder.hpp"

namespace weft::training_graph {

void TrainingGraphBuilder::emit_redundant_forward(int stage, int mb, const PerPeer<TensorId>& x) {
  const int successor = (position_of(stage) + 1) % s_.parallel.pp;
  const Chunk& replica =
      chunks_.at({sample_, stage_kernels_[static_cast<std::size_t>(stage)]})[static_cast<std::size_t>(successor)]
          .front();
  ForwardRecord scratch;
  Bytes kept_bytes = 0;
  redundant_saved_ = &kept_bytes;
  forward_body(stage, replica, successor == 0 ? PerPeer<TensorId>{} : x, {}, mb, scratch);
  redundant_saved_ = nullptr;
  PassValues kept{std::move(scratch.output)};
  if (kept_bytes > 0) {
    kept.push_back(add_tensors(stage, kept_bytes, TensorKind::activation, name("redundant activations mb{}", mb)));
    produce(last_compute_ops_, kept.back());
  }
  redundant_kept_[{stage, mb}] = std::move(kept);
  release_redundant(stage, mb);
}

void TrainingGraphBuilder::note_backward_end(int stage, int mb) {
  backward_ends_[{stage, mb}] = last_compute_ops_;
  const int pp = s_.parallel.pp;
  release_redundant(stage_of(replica_of(stage), (position_of(stage) + pp - 1) % pp), mb);
}

void TrainingGraphBuilder::release_redundant(int keeper, int mb) {
  const int successor = stage_of(replica_of(keeper), (position_of(keeper) + 1) % s_.parallel.pp);
  const auto kept = redundant_kept_.find({keeper, mb});
  const auto ended = backward_ends_.find({successor, mb});
  if (kept == redundant_kept_.end() || ended == backward_ends_.end()) return;
  const std::vector<Peer>& keepers = stages_[static_cast<std::size_t>(keeper)];
  PerPeer<StreamId>& streams = release_streams_[keeper];
  if (streams.empty()) {
    for (const Peer& peer : keepers) streams.push_back(b_->add_stream(peer.device, "redundant"));
  }
  OpWork release;
  release.op_class = OpClass::barrier;
  const WorkId work = b_->intern_work(release);
  const NameId release_name = b_->intern_name(name("release redundant activations mb{}", mb));
  PerPeer<OpId> ops;
  for (std::size_t i = 0; i < keepers.size(); ++i) ops.push_back(b_->add_op(release_name, work, streams[i]));
  for (const PerPeer<TensorId>& tensors : kept->second) consume(ops, tensors);
  after(ended->second, ops);
  redundant_kept_.erase(kept);
  backward_ends_.erase(ended);
}

}  // namespace weft::training_graph
