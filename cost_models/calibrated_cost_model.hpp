#pragma once

#include <array>
#include <limits>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "cost_models/log_grid_table.hpp"
#include "simulator/core/op_work.hpp"
#include "simulator/core/units.hpp"

namespace weft {

// A communication op's time as latency plus bytes over bandwidth.
struct AlphaBeta {
  double latency_s = 0.0;
  double seconds_per_byte = 0.0;

  double seconds(Bytes bytes) const { return latency_s + seconds_per_byte * static_cast<double>(bytes); }
  bool operator==(const AlphaBeta&) const = default;
};

// A communication op's time over its message size: a latency and a bandwidth in each size range
// (regime) where one protocol runs (NCCL's LL, LL128 and Simple; MPI's eager and rendezvous
// messages). Regimes are in increasing size; each covers sizes up to its `up_to` bytes, the last
// every larger size too.
struct CommunicationFit {
  struct Regime {
    Bytes up_to = 0;
    AlphaBeta fit;
    bool operator==(const Regime&) const = default;
  };
  std::vector<Regime> regimes;

  CommunicationFit() = default;
  // One regime for every size: an AlphaBeta converts to it.
  CommunicationFit(AlphaBeta one) : regimes{{std::numeric_limits<Bytes>::max(), one}} {}
  explicit CommunicationFit(std::vector<Regime> by_size) : regimes(std::move(by_size)) {}

  double seconds(Bytes bytes) const;
  bool operator==(const CommunicationFit&) const = default;
};

// The FLOPs an efficiency is measured against, from the op's shape alone: 2mnk for a GEMM
// {m, n, k}; for attention {batch, heads, queries, keys, head_dim, causal} 4 b h q k d, halved
// when causal (a seventh dimension, kv_heads, changes nothing), and 2.5 times that for the backward pass (flash
// attention recomputes the scores).
double nominal_flops(OpClass op_class, std::span<const std::int64_t> shape);

// A dtype's GEMM efficiency: a table over a grid of (m, n, k) measured in one operand layout,
// scaled for the other layouts by how their measurements compare with the table, and the
// efficiency each measured shape reached, which costs that exact shape.
struct GemmEfficiency {
  LogGridTable grid;
  Kernel grid_layout = Kernel::any;
  std::map<Kernel, double> layout_factors{};  // measured / table, geometric mean per layout
  std::map<std::tuple<Kernel, std::int64_t, std::int64_t, std::int64_t>, double> points{};

  double at(Kernel layout, std::span<const std::int64_t> mnk) const;
};

// A calibration profile's cost model (docs/calibration.md): per op class, efficiency curves
// fitted to measurements of one device, in place of the roofline's constant α.
//   gemm                 GemmEfficiency per dtype
//   attention            efficiency over (batch x heads, sqrt(queries x keys), head_dim), per
//                        pass, dtype, causal mask and kernel family
//   memory-bound kernels efficiency over the op's own shape ((rows, width), or (parameters) for
//                        the optimizer), per kernel (layernorm_fwd, gelu_fwd, adamw_fused, ...)
//   memory-bound ops     (elementwise, norm, embedding, loss, optimizer, memcpy) no kernel table
//                        covers: efficiency over the bytes they move, per dtype
//   communication        latency and bandwidth per collective and placement, per size regime
// Efficiencies are fractions of the profile's reference peak FLOP/s and memory bandwidth per
// dtype (the best the device reached in its measurements), so the profile stands on its own.
// A table for an op's own kernel is preferred; an attention op falls back to the table of kernel
// `any` (a backend's own kernel), a memory-bound op to the bytes curve. fp16 ops use bf16 tables
// where the profile measured no fp16, and the other way round.
class CalibratedCostModel {
 public:
  explicit CalibratedCostModel(std::string device = {}) : device_(std::move(device)) {}

  // The device the measurements came from; simulations check it against the cluster's.
  const std::string& device() const { return device_; }

  void set_peak_flops(Dtype dtype, double flops_per_s) { peak_flops_[dtype] = flops_per_s; }
  void set_memory_bandwidth(Dtype dtype, double bytes_per_s) { memory_bandwidth_[dtype] = bytes_per_s; }
  void set_gemm(Dtype dtype, GemmEfficiency efficiency) { gemm_[dtype] = std::move(efficiency); }
  void set_attention(OpClass pass, Dtype dtype, bool causal, LogGridTable efficiency, Kernel kernel = Kernel::any) {
    attention_[{pass, dtype, causal, kernel}] = std::move(efficiency);
  }
  void set_memory_bound(Dtype dtype, LogGridTable efficiency) { memory_bound_[dtype] = std::move(efficiency); }
  // The host's time to issue one op (docs/host-issue.md): of `op`'s class, or, without one, of
  // every class that has none of its own; 0 where the profile measured none.
  void set_host_issue_ns(std::optional<OpClass> op, TimeNs ns) {
    if (op) {
      host_issue_by_op_[*op] = ns;
    } else {
      host_issue_ns_ = ns;
    }
  }
  TimeNs host_issue_ns(OpClass op) const {
    const auto own = host_issue_by_op_.find(op);
    return own != host_issue_by_op_.end() ? own->second : host_issue_ns_;
  }
  TimeNs host_issue_ns() const { return host_issue_ns_; }
  const std::map<OpClass, TimeNs>& host_issue_by_op() const { return host_issue_by_op_; }
  // The device's gap between kernels queued back to back (docs/host-issue.md); 0 where the
  // profile measured none.
  void set_kernel_gap_ns(TimeNs ns) { kernel_gap_ns_ = ns; }
  TimeNs kernel_gap_ns() const { return kernel_gap_ns_; }
  void set_memory_kernel(Kernel kernel, Dtype dtype, LogGridTable efficiency) {
    memory_kernels_[{kernel, dtype}] = std::move(efficiency);
  }
  // A fit for `op_class` over groups of `group_size` ranks, `ranks_per_node` of them on each node
  // they span.
  void set_communication(OpClass op_class, int group_size, int ranks_per_node, CommunicationFit fit) {
    communication_[{op_class, group_size, ranks_per_node}] = std::move(fit);
  }

  // The calibrated time of a compute op, or nothing when the profile does not cover its class
  // and dtype (the caller then uses its default rule).
  std::optional<TimeNs> compute_duration(const OpWork& work) const;
  // The calibrated time of a communication op over a group of `group_size` ranks placed
  // `ranks_per_node` to a node, or nothing: a fit of one placement never prices another (a
  // profile measured inside a node says nothing of the network between nodes).
  std::optional<TimeNs> communication_duration(OpClass op_class, Bytes bytes, int group_size, int ranks_per_node) const;
  // Whether the profile measured any communication op over that placement.
  bool measured_placement(int group_size, int ranks_per_node) const;

  using AttentionKey = std::tuple<OpClass, Dtype, bool, Kernel>;
  using KernelKey = std::pair<Kernel, Dtype>;
  using CommunicationKey = std::tuple<OpClass, int, int>;  // op, group size, ranks per node
  const std::map<Dtype, double>& peak_flops() const { return peak_flops_; }
  const std::map<Dtype, double>& memory_bandwidth() const { return memory_bandwidth_; }
  const std::map<Dtype, GemmEfficiency>& gemm() const { return gemm_; }
  const std::map<AttentionKey, LogGridTable>& attention() const { return attention_; }
  const std::map<Dtype, LogGridTable>& memory_bound() const { return memory_bound_; }
  const std::map<KernelKey, LogGridTable>& memory_kernels() const { return memory_kernels_; }
  const std::map<CommunicationKey, CommunicationFit>& communication() const { return communication_; }

 private:
  // The dtype whose tables cost an op of `dtype`: its own, or, for a 16-bit float type the profile
  // has no measurement of, the other one (fp16 and bf16 run at the same tensor-core rate and
  // move the same bytes on every GPU weft bundles).
  Dtype measured_dtype(Dtype dtype) const;
  std::optional<TimeNs> compute_bound(double efficiency, double flops, Dtype dtype) const;
  std::optional<TimeNs> memory_duration(const OpWork& work, Dtype dtype) const;

  std::string device_;
  std::map<Dtype, double> peak_flops_;
  std::map<Dtype, double> memory_bandwidth_;
  std::map<Dtype, GemmEfficiency> gemm_;
  std::map<AttentionKey, LogGridTable> attention_;
  std::map<Dtype, LogGridTable> memory_bound_;
  std::map<KernelKey, LogGridTable> memory_kernels_;
  std::map<CommunicationKey, CommunicationFit> communication_;
  TimeNs host_issue_ns_ = 0;
  std::map<OpClass, TimeNs> host_issue_by_op_;
  TimeNs kernel_gap_ns_ = 0;
};

// Whether `op_class` is costed by the memory-bound efficiency curve.
bool is_memory_bound_class(OpClass op_class);

// The point of an attention op's shape on its efficiency table: batch x heads, the geometric
// mean of queries and keys, head_dim.
std::array<double, 3> attention_table_point(std::span<const std::int64_t> shape);

}  // namespace weft
