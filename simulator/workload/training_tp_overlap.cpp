// TP communication overlapped with the GEMMs of the forward pass, as Megatron-Core's
// --tp-comm-overlap runs Transformer Engine's userbuffers (NVIDIA/TransformerEngine
// transformer_engine/pytorch/module/base.py, initialize_ub's defaults at fecb10bd): qkv_fprop and
// fc1_fprop by "ring_exchange" (copy-engine transfers, the GEMM split into TP parts), proj_fprop
// and fc2_fprop by "pipeline" (the GEMM split into 4, each part's reduce-scatter run while the next
// part computes, on 16 SMs the GEMM leaves them). docs/stacks.md says what this leaves out.
#include "simulator/workload/op_parts.hpp"
#include "simulator/workload/training_graph_builder.hpp"

namespace weft::training_graph {

TpOverlapPair TrainingGraphBuilder::tp_overlap_at(const Chunk& chunk, std::size_t i) const {
  // ZeRO-3 gathers each layer's parameters step by step (training_sharded_layers.cpp); Megatron-Core
  // has no ZeRO-3, so the two are not combined.
  if (!s_.overlaps_tp_communication() || s_.parallel.zero >= 3 || i + 1 >= chunk.steps.size())
    return TpOverlapPair::none;
  if (!is_layer(chunk, i) || chunk.block[i] != chunk.block[i + 1]) return TpOverlapPair::none;
  return tp_overlap_pair(chunk.steps[i], chunk.steps[i + 1], dims_.tp_at(chunk.group % s_.parallel.pp));
}

std::pair<PerPeer<OpId>, PerPeer<OpId>> TrainingGraphBuilder::emit_tp_overlap(TpOverlapPair overlap, int stage,
                                                                              const Step& first, const Step& second,
                                                                              int mb, const PerPeer<TensorId>& input,
                                                                              const PerPeer<TensorId>& first_output) {
  std::pair<PerPeer<OpId>, PerPeer<OpId>> ends;
  if (overlap == TpOverlapPair::gather_then_gemm) {
    // Ring exchange: each rank's GEMM starts on its own token shard while it passes the shard on
    // to its TP neighbour; each later part waits for the shard that arrives from the other side.
    const std::int64_t parts = tp_of(stage);
    const RankCoordinates& at = stages_[static_cast<std::size_t>(stage)].front().coordinates;
    OpWork transfer = {};
    transfer.op_class = OpClass::send;
    transfer.network_bytes = first.forward->network_bytes / parts;
    transfer.shape = {transfer.network_bytes};
    transfer.comm_group = point_to_point_group(CommGroupKind::tp, stages_[static_cast<std::size_t>(stage)].front().rank,
                                               dims_.rank_of({(at.tp + 1) % tp_of(stage), at.cp, at.dp, at.pp}));
    const WorkId transfer_work = b_->intern_work(transfer);
    const WorkId part_work = b_->intern_work(gemm_row_part(*second.forward, parts));
    PerPeer<TensorId> shard = input;
    for (std::int64_t j = 0; j < parts; ++j) {
      const PerPeer<OpId> gemm = add_ops(stage, name("{} fwd{} part {}/{}", second.name, mb_suffix(mb), j + 1, parts),
                                         part_work, std::nullopt);
      consume(gemm, shard);
      if (j + 1 == parts) {
        consume(gemm, first_output);
        ends.second = gemm;
        break;
      }
      const NameId send_name = b_->intern_name(name("{} send{} {}/{}", first.name, mb_suffix(mb), j + 1, parts - 1));
      PerPeer<OpId> sends;
      for (const Peer& peer : peers(stage)) {
        sends.push_back(b_->add_op(send_name, transfer_work, lane_stream(peer, Lane::tensor_parallel)));
      }
      consume(sends, shard);
      // The shard arriving from the other neighbour, whose send mirrors this one (folded: this
      // rank's own, by symmetry); it lands in the gathered buffer, so it holds no memory itself.
      PerPeer<TensorId> arrived = add_tensors(stage, 0, TensorKind::buffer);
      produce(sends, arrived);
      if (j == 0) ends.first = sends;
      shard = std::move(arrived);
    }
    return ends;
  }
  // Pipeline: each quarter of the GEMM's rows, then its reduce-scatter on the TP stream while the
  // next quarter computes.
  OpWork part = gemm_row_part(*first.forward, kTpOverlapPipelineParts);
  part.reserved_sms = kTpOverlapPipelineSms;
  const WorkId part_work = b_->intern_work(part);
  OpWork scatter = *second.forward;
  scatter.network_bytes /= kTpOverlapPipelineParts;
  scatter.shape = {scatter.network_bytes};
  const WorkId scatter_work = placed_work(scatter, CommGroupKind::tp, stage);  // not step_work: its cache is by address
  for (std::int64_t k = 0; k < kTpOverlapPipelineParts; ++k) {
    const PerPeer<OpId> gemm =
        add_ops(stage, name("{} fwd{} part {}/{}", first.name, mb_suffix(mb), k + 1, kTpOverlapPipelineParts),
                part_work, std::nullopt);
    consume(gemm, input);
    PerPeer<TensorId> partial = add_tensors(stage, 0, TensorKind::buffer);  // a part of first_output
    produce(gemm, partial);
    const PerPeer<OpId> reduce =
        add_ops(stage, name("{} fwd{} part {}/{}", second.name, mb_suffix(mb), k + 1, kTpOverlapPipelineParts),
                scatter_work, CommGroupKind::tp, Lane::tensor_parallel);
    consume(reduce, partial);
    if (k == 0) ends.first = gemm;
    if (k + 1 == kTpOverlapPipelineParts) {
      consume(reduce, first_output);
      ends.second = reduce;
    }
  }
  return ends;
}

}  // namespace weft::training_graph
