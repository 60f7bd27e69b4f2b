#include "kernels/bench/host_issue_bench.hpp"

#include <chrono>
#include <cstdint>

namespace weft {

KernelOp busy_gemm() {
  KernelOp op;
  op.kind = KernelKind::gemm;
  op.gemm = {8192, 8192, 8192, Dtype::bf16, GemmLayout::nt};
  return op;
}

namespace {

// The smallest op there is, as `weft live`'s start marker.
KernelOp one_element_copy() {
  KernelOp op;
  op.kind = KernelKind::memory_bound;
  op.memory = {1, 1, 1, Dtype::bf16};
  return op;
}

}  // namespace

std::optional<HostIssueMeasurement> measure_host_issue(Backend& backend, OperandPool& pool, int samples,
                                                       const KernelOp& busy) {
  if (!backend.device().issues_asynchronously) return std::nullopt;
  const KernelOp copy = one_element_copy();
  pool.reserve(busy.read_bytes(), busy.write_bytes());
  HostIssueMeasurement host;
  host.label = "one-element copies issued behind an 8192 x 8192 x 8192 bf16 GEMM, as weft live issues ops";
  auto issue = [&](std::uint32_t span, const KernelOp& op) {
    backend.open_span(span);
    run_kernel(backend, pool, op);
    backend.issued_span(span);
    backend.close_span(span);
  };
  for (int sample = 0; sample < samples; ++sample) {
    issue(0, busy);
    const auto start = std::chrono::steady_clock::now();
    for (std::uint32_t i = 1; i <= kIssuesPerSample; ++i) issue(i, copy);
    const auto issued = std::chrono::steady_clock::now();
    backend.synchronize();
    backend.take_spans();
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(issued - start).count();
    host.samples_ns.push_back(static_cast<double>(ns) / kIssuesPerSample);
  }
  return host;
}

}  // namespace weft
