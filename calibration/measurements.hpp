#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "calibration/sample_stats.hpp"
#include "simulator/core/dtype.hpp"
#include "simulator/core/json_cursor.hpp"
#include "simulator/core/kernel.hpp"
#include "simulator/core/op_class.hpp"
#include "simulator/core/units.hpp"

namespace weft {

// Whether calibration fits a measurement or keeps it aside to judge the fit.
enum class MeasurementSplit : std::uint8_t { fit, holdout };
inline constexpr EnumNames<MeasurementSplit, 2> kMeasurementSplitNames({"fit", "holdout"});

// The timings of one op at one shape (docs/calibration.md, measurement files). The shape's
// fields depend on the op (measurement_shape_fields); their values are kept in that order.
struct Measurement {
  OpClass op = OpClass::gemm;
  Dtype dtype = Dtype::fp32;
  Kernel kernel = Kernel::any;  // the implementation measured, where several implement the op
  std::vector<std::int64_t> shape;
  MeasurementSplit split = MeasurementSplit::fit;
  // GEMMs only: false for a shape off the grid (a layer's GEMM), fitted as a point of its own.
  bool grid = true;
  std::vector<double> samples_ns;
  std::string source{};  // a key of MeasurementSet::sources; empty: the file's own measurement
  std::string label{};   // what the shape is, for people ("llama3-8b tp1 qkv fwd")

  double median_ns() const { return sample_stats(samples_ns).median; }
  double median_s() const { return median_ns() / kNsPerSecond; }
  // The shape field `name` (a communication shape of two fields is on one node: its
  // ranks_per_node is its group_size).
  std::int64_t field(std::string_view name) const;
};

// The host's time to issue one op while the device is busy (a framework's dispatch and launch;
// docs/host-issue.md): what a host-issued stream's ops wait for when they are shorter. For the ops
// of one class (a GEMM's library call costs the host more than a plain kernel's launch), or,
// without a class, for every op of a class that has no measurement of its own.
struct HostIssueMeasurement {
  std::optional<OpClass> op{};
  std::vector<double> samples_ns;
  std::string source{};  // as Measurement::source
  std::string label{};   // what was issued, for people

  double median_ns() const { return sample_stats(samples_ns).median; }
};

// The device's time between two kernels queued back to back on one stream (its front end
// launching the next one), measured where the host is ahead of the device (docs/host-issue.md).
struct KernelGapMeasurement {
  std::vector<double> samples_ns;
  std::string source{};  // as Measurement::source
  std::string label{};   // what ran back to back, for people

  double median_ns() const { return sample_stats(samples_ns).median; }
};

// A measurement file: what `weft bench` measured on one backend and device.
struct MeasurementSet {
  std::string backend;  // "cpu" or "cuda"
  std::string device;
  std::int64_t device_memory_bytes = 0;  // memory one rank may use; 0 when unknown
  std::vector<std::pair<std::string, std::string>> libraries;
  std::string timestamp;  // ISO 8601, UTC
  int ranks = 1;
  int ranks_per_node = 0;  // ranks on each node of the job; 0: all of them on one node
  int node_ranks() const { return ranks_per_node > 0 ? ranks_per_node : ranks; }
  bool quick = false;
  int warmup = 0;
  int samples = 0;
  double sample_ms = 0.2;  // a short op repeated back to back until a sample lasts this long
  std::vector<Measurement> measurements;
  std::vector<HostIssueMeasurement> host_issue;  // at most one per op class, and one without
  std::optional<KernelGapMeasurement> kernel_gap;
  // Where measurements not made by `weft bench` come from: citation per key, and remarks.
  std::vector<std::pair<std::string, std::string>> sources;
  std::vector<std::string> notes;
};

// The ops a measurement file may hold, and the names of their shape fields in order:
//   gemm                              m, n, k
//   attention_fwd, attention_bwd      batch, heads, queries, keys, head_dim, causal, kv_heads (optional,
//                                     default heads; a shape of six fields where it equals heads)
//   elementwise (the memory-bound op) inputs, outputs (elements)
//   norm, elementwise of a kernel     rows, width (the op's output is rows x width)
//   optimizer (adamw_fused)           parameters
//   allreduce, allgather, reducescatter, alltoall, broadcast, send
//                                     bytes, group_size, ranks_per_node (the group's members on each
//                                     node it spans; optional, default group_size: one node)
bool is_measured_op(OpClass op);
const std::vector<std::string_view>& measurement_shape_fields(OpClass op, Kernel kernel = Kernel::any);

// Reads a measurement file, checking every field; errors name the JSON path.
MeasurementSet read_measurements(const JsonCursor& root);
nlohmann::json measurements_json(const MeasurementSet& set);

}  // namespace weft
