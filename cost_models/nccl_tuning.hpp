#pragma once

#include <optional>
#include <string_view>

#include "cost_models/comm_group.hpp"
#include "simulator/core/op_class.hpp"
#include "simulator/core/units.hpp"

namespace weft {

// NCCL's protocols: LL (8-byte stores with a flag: lowest latency, half the bandwidth), LL128
// (128-byte lines, 120 bytes of data) and Simple (bulk copies, full bandwidth, highest latency).
enum class NcclProtocol : std::uint8_t { ll, ll128, simple };

inline constexpr EnumNames<NcclProtocol, 3> kNcclProtocolNames({"LL", "LL128", "Simple"});

// NCCL's algorithms as its tuner costs them: rings, and the double binary tree (all-reduce only).
enum class NcclAlgorithm : std::uint8_t { ring, tree };

// What NCCL's tuner needs to know about a communicator besides its placement.
struct NcclLinks {
  // Bytes/s a ring over the group moves per rank (NCCL's nChannels x per-channel bandwidth): NVLink
  // inside a node, the node's NICs across nodes. The tree is given the same bandwidth.
  double bus_bandwidth = 0.0;
  // The GPU's compute capability major x 10 (80 for sm80): some caps of the model depend on it.
  int compute_capability = 90;
};

// The time NCCL's own performance model gives a collective for one algorithm and protocol
// (src/graph/tuning.cc of NVIDIA/nccl at 5067397c, ncclTopoTuneModel and ncclTopoGetAlgoTime:
// docs/collectives.md lists what is kept and what is left out). Empty where NCCL does not run
// that combination: trees only reduce all of a buffer (all-reduce). Collectives are all-reduce,
// all-gather, reduce-scatter and broadcast, with nccl-tests' message sizes.
std::optional<double> nccl_collective_seconds(OpClass op_class, NcclAlgorithm algorithm, NcclProtocol protocol,
                                              Bytes bytes, const CommGroup& group, const NcclLinks& links);

// The compute capability of a DeviceSpec architecture name ("sm90" -> 90); 90 when it is empty or
// not of that form.
int compute_capability(std::string_view architecture);

}  // namespace weft
