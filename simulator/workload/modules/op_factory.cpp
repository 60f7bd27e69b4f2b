#include "simulator/workload/modules/op_factory.hpp"

namespace weft {

OpWork gemm_work(std::int64_t m, std::int64_t n, std::int64_t k, Dtype dtype, Kernel layout) {
  OpWork work;
  work.op_class = OpClass::gemm;
  work.dtype = dtype;
  work.kernel = layout;
  work.flops = 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  work.memory_bytes = (m * k + k * n + m * n) * bytes_per_element(dtype);
  work.shape = {m, n, k};
  return work;
}

OpWork memory_bound_work(OpClass op_class, Bytes memory_bytes, double flops, Dtype dtype, WorkShape shape) {
  OpWork work;
  work.op_class = op_class;
  work.dtype = dtype;
  work.flops = flops;
  work.memory_bytes = memory_bytes;
  work.shape = std::move(shape);
  return work;
}

OpWork adam_step_work(std::int64_t parameters) {
  constexpr Bytes kTrafficBytes = 28;
  OpWork work = memory_bound_work(OpClass::optimizer, kTrafficBytes * parameters,
                                  10.0 * static_cast<double>(parameters), Dtype::fp32, {parameters});
  work.kernel = Kernel::adamw_fused;
  return work;
}

OpWork communication_work(OpClass op_class, Bytes bytes) {
  OpWork work;
  work.op_class = op_class;
  work.network_bytes = bytes;
  work.shape = {bytes};
  return work;
}

}  // namespace weft
