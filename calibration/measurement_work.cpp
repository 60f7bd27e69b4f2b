#include "calibration/measurement_work.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <vector>

#include "cost_models/comm_group.hpp"
#include "simulator/workload/modules/elementwise.hpp"
#include "simulator/workload/modules/norm.hpp"
#include "simulator/workload/modules/op_factory.hpp"

namespace weft {
namespace {

OpWork norm_measurement_work(const Measurement& m) {
  const bool layernorm = m.kernel == Kernel::layernorm_fwd || m.kernel == Kernel::layernorm_bwd;
  const bool backward = m.kernel == Kernel::layernorm_bwd || m.kernel == Kernel::rmsnorm_bwd;
  return norm_work(layernorm ? NormKind::layernorm : NormKind::rmsnorm, backward, m.field("rows"), m.field("width"),
                   m.dtype);
}

}  // namespace

OpWork compute_measurement_work(const Measurement& m) {
  const std::int64_t element = bytes_per_element(m.dtype);
  switch (m.op) {
    case OpClass::gemm:
      return gemm_work(m.shape[0], m.shape[1], m.shape[2], m.dtype, m.kernel);
    case OpClass::attention_fwd:
    case OpClass::attention_bwd: {
      const std::int64_t rows = m.field("batch") * m.field("heads") * m.field("head_dim") * element;
      // Q and O of every query, K and V of every key; the backward pass reads and writes twice that.
      const Bytes traffic =
          2 * rows * (m.field("queries") + m.field("keys")) * (m.op == OpClass::attention_bwd ? 2 : 1);
      OpWork work = memory_bound_work(m.op, traffic, nominal_flops(m.op, m.shape), m.dtype,
                                      WorkShape(m.shape.begin(), m.shape.end()));
      work.kernel = m.kernel;
      return work;
    }
    case OpClass::norm:
      return norm_measurement_work(m);
    case OpClass::optimizer:
      return adam_step_work(m.field("parameters"));
    case OpClass::elementwise: {
      if (m.kernel != Kernel::any) {
        return elementwise_forward_work(elementwise_kernel_shape(m.kernel, m.field("width")), m.field("rows"), 1,
                                        m.dtype);
      }
      const std::int64_t outputs = m.field("outputs");
      return memory_bound_work(OpClass::elementwise, (m.field("inputs") + outputs) * element,
                               2.0 * static_cast<double>(outputs), m.dtype, {outputs});
    }
    default:
      throw std::logic_error("compute_measurement_work: a communication measurement");
  }
}

OpWork measurement_work(const Measurement& m, ClusterCostModel& cost) {
  if (category_of(m.op) != OpCategory::communication) return compute_measurement_work(m);
  // The measured group's ranks: ranks_per_node on each of its nodes, nodes of the cluster's
  // gpus_per_node consecutive ranks.
  const std::int64_t per_node = m.field("ranks_per_node");
  const std::int64_t node_size = std::max<std::int64_t>(cost.cluster().gpus_per_node, per_node);
  std::vector<std::int64_t> ranks;
  for (std::int64_t node = 0; node < m.field("group_size") / per_node; ++node) {
    for (std::int64_t i = 0; i < per_node; ++i) ranks.push_back(node * node_size + i);
  }
  OpWork work = communication_work(m.op, m.field("bytes"));
  work.comm_group = cost.add_group(make_comm_group(CommGroupKind::tp, ranks, cost.cluster()));
  return work;
}

double predicted_seconds(const Measurement& m, ClusterCostModel& cost) {
  return static_cast<double>(cost.duration(measurement_work(m, cost), cost.cluster().gpu)) / kNsPerSecond;
}

}  // namespace weft
