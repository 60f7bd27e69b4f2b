// NCCL's tuner model of collective time: its latency and bandwidth tables per algorithm and
// protocol, as NVIDIA/nccl 5067397c (src/graph/tuning.cc) sets and uses them.
#include "cost_models/nccl_tuning.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <charconv>

namespace weft {
namespace {

constexpr std::size_t kProtocols = 3;  // LL, LL128, Simple
using PerProtocol = std::array<double, kProtocols>;

// baseLatencies (us) of Tree and Ring.
constexpr PerProtocol kTreeBaseLatency = {6.8, 14.0, 8.4};
constexpr PerProtocol kRingBaseLatency = {6.6, 14.0, 8.4};
// hwLatencies (us) per hop over NVLink and over the network, of Tree and Ring.
constexpr PerProtocol kNvlinkTreeLatency = {0.6, 1.25, 4.0};
constexpr PerProtocol kNvlinkRingLatency = {0.6, 1.9, 3.4};
constexpr PerProtocol kNetTreeLatency = {5.0, 8.5, 14.0};
constexpr PerProtocol kNetRingLatency = {2.7, 4.0, 14.0};
// treeCorrectionFactor: the tree's bandwidth per protocol by log2(bytes / 64), for 0..22.
constexpr std::array<std::array<double, 23>, kProtocols> kTreeCorrection = {{
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9},
}};
// The network's per-step host overhead (getNetOverhead, an x86 Intel host), tripled for Simple.
constexpr double kNetOverheadUs = 1.0;
// The ring's "plateau" across nodes: NCCL multiplies the latency of large Simple all-reduces.
constexpr double kRingPlateauFactorAmpereOn = 1.4;
constexpr double kRingPlateauFactorBefore = 1.9;
// NCCL applies the plateau when bytes / (channels x ranks) >= 64. Channels are at most
// MAXCHANNELS (64): from 64 x 64 bytes per rank on it surely applies, and weft applies it there
// only (below, it depends on a channel count NCCL's topology search decides; LL usually wins there).
constexpr double kPlateauBytesPerRank = 64.0 * 64.0;

std::size_t index(NcclProtocol protocol) { return static_cast<std::size_t>(protocol); }

// llMaxBws (GB/s): LL's bandwidth ceiling. Inside a node by GPU generation; across nodes by the
// host CPU (an Intel host assumed) and by whether there are 2 nodes or more.
double ll_max_bandwidth(int nodes, int capability) {
  if (nodes > 1) return (nodes == 2 ? 39.0 : 20.4) * 1e9;
  if (capability >= 100) return 282.0e9;
  if (capability >= 90) return 141.0e9;
  if (capability >= 80) return 87.7e9;
  return 39.0e9;
}

int floor_log2(std::uint64_t value) { return value == 0 ? -1 : static_cast<int>(std::bit_width(value)) - 1; }

struct LatencyBandwidth {
  double latency_us = 0.0;
  double bandwidth = 0.0;  // algorithm bandwidth, bytes/s
};

LatencyBandwidth ring(OpClass op_class, NcclProtocol protocol, const CommGroup& group, const NcclLinks& links) {
  const int n = group.size;
  const int nodes = group.nodes;
  const std::size_t p = index(protocol);
  const int steps = op_class == OpClass::allreduce                                         ? 2 * (n - 1)
                    : op_class == OpClass::allgather || op_class == OpClass::reducescatter ? n - 1
                                                                                           : n;
  double bus = links.bus_bandwidth;
  if (protocol == NcclProtocol::ll) bus = std::min(ll_max_bandwidth(nodes, links.compute_capability), bus * 0.5);
  if (protocol == NcclProtocol::ll128) bus *= 0.92;  // 120 of a 128-byte line carry data
  LatencyBandwidth out{kRingBaseLatency[p], bus * n / steps};
  if (op_class == OpClass::broadcast) {
    // Without proper chunk modelling NCCL charges a hop per step, a tree's hop for Simple.
    const PerProtocol& hop = nodes > 1 ? (protocol == NcclProtocol::simple ? kNetTreeLatency : kNetRingLatency)
                                       : (protocol == NcclProtocol::simple ? kNvlinkTreeLatency : kNvlinkRingLatency);
    out.latency_us += steps * hop[p];
    return out;
  }
  double intra = kNvlinkRingLatency[p];
  // With one rank per node every hop is a network hop; NCCL charges the tree's network latency.
  const double inter = group.ranks_per_node == 1 && nodes > 1 ? kNetTreeLatency[p] : kNetRingLatency[p];
  if (nodes > 1) intra = std::max(intra, kNetOverheadUs * (protocol == NcclProtocol::simple ? 3.0 : 1.0));
  const int inter_steps = nodes == 1 ? 0 : op_class == OpClass::allreduce ? 2 * (nodes - 1) : nodes - 1;
  // The network hop of Simple also waits for a flush; IB's latency is reported as 0, so adds none.
  out.latency_us += (steps - inter_steps) * intra + inter_steps * inter;
  return out;
}

LatencyBandwidth tree(NcclProtocol protocol, const CommGroup& group, const NcclLinks& links) {
  const int nodes = group.nodes;
  const std::size_t p = index(protocol);
  double bus = links.bus_bandwidth * 0.92;
  if (protocol == NcclProtocol::ll) bus = std::min(bus / 3.8, ll_max_bandwidth(nodes, links.compute_capability));
  if (protocol == NcclProtocol::ll128) bus *= nodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0;
  // With one GPU of the communicator per node NCCL's search falls back to its plain tree pattern,
  // which its model charges 0.85 more (search.cc forces NCCL_TOPO_PATTERN_TREE for one GPU).
  if (nodes > 1 && group.ranks_per_node == 1) bus *= 0.85;
  // A tree all-reduce moves the whole buffer up and down: its algorithm bandwidth is half its bus's.
  LatencyBandwidth out{kTreeBaseLatency[p], bus * 0.5};
  const double intra = kNvlinkTreeLatency[p];
  const double inter = kNetTreeLatency[p];
  const int ranks_per_node = group.size / std::max(1, nodes);
  out.latency_us += 2.0 * ((ranks_per_node - 1) * intra + floor_log2(static_cast<std::uint64_t>(nodes)) * inter);
  return out;
}

}  // namespace

int compute_capability(std::string_view architecture) {
  int value = 0;
  if (architecture.size() > 2 && architecture.substr(0, 2) == "sm") {
    const auto digits = architecture.substr(2);
    const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (error == std::errc() && end == digits.data() + digits.size() && value > 0) return value;
  }
  return 90;
}

std::optional<double> nccl_collective_seconds(OpClass op_class, NcclAlgorithm algorithm, NcclProtocol protocol,
                                              Bytes bytes, const CommGroup& group, const NcclLinks& links) {
  if (algorithm == NcclAlgorithm::tree && op_class != OpClass::allreduce) return std::nullopt;
  if (protocol == NcclProtocol::ll128 && links.compute_capability < 70) return std::nullopt;
  LatencyBandwidth model =
      algorithm == NcclAlgorithm::ring ? ring(op_class, protocol, group, links) : tree(protocol, group, links);
  const double size = static_cast<double>(bytes);
  const int log_size = floor_log2(static_cast<std::uint64_t>(bytes) >> 6);
  if (algorithm == NcclAlgorithm::tree && log_size >= 0 && log_size < 23) {
    model.bandwidth *= kTreeCorrection[index(protocol)][static_cast<std::size_t>(log_size)];
  }
  if (algorithm == NcclAlgorithm::ring && protocol == NcclProtocol::simple && group.nodes > 1 &&
      op_class == OpClass::allreduce && size / group.size >= kPlateauBytesPerRank) {
    model.latency_us *= links.compute_capability < 80 ? kRingPlateauFactorBefore : kRingPlateauFactorAmpereOn;
  }
  return model.latency_us * 1e-6 + size / model.bandwidth;
}

}  // namespace weft
