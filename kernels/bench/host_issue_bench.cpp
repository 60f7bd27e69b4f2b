#include "kernels/bench/host_issue_bench.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>

#include "calibration/sample_stats.hpp"

namespace weft {

KernelOp busy_gemm() {
  KernelOp op;
  op.kind = KernelKind::gemm;
  op.gemm = {8192, 8192, 8192, Dtype::bf16, GemmLayout::nt};
  return op;
}

std::vector<HostIssueProbe> host_issue_probes() {
  KernelOp gemm;
  gemm.kind = KernelKind::gemm;
  gemm.gemm = {1024, 1024, 1024, Dtype::bf16, GemmLayout::nt};
  const std::array<std::int64_t, 6> attention_shape = {1, 8, 512, 512, 64, 1};  // causal
  KernelOp forward;
  forward.kind = KernelKind::attention_forward;
  forward.attention = attention_shape_of(attention_shape, Dtype::bf16);
  KernelOp backward = forward;
  backward.kind = KernelKind::attention_backward;
  // The smallest op there is, as `weft live`'s start marker.
  KernelOp copy;
  copy.kind = KernelKind::memory_bound;
  copy.memory = {1, 1, 1, Dtype::bf16};
  return {
      {OpClass::gemm, gemm, "1024 x 1024 x 1024 bf16 nt GEMMs"},
      {OpClass::attention_fwd, forward, "causal bf16 attention forward, 1 x 8 heads x 512 x 64"},
      {OpClass::attention_bwd, backward, "causal bf16 attention backward, 1 x 8 heads x 512 x 64"},
      {std::nullopt, copy, "one-element copies (the memory-bound kernel, every other op class)"},
  };
}

IssueMeasurements measure_host_issue(Backend& backend, OperandPool& pool, int samples, const KernelOp& busy,
                                     const std::vector<HostIssueProbe>& probes) {
  if (!backend.device().issues_asynchronously) return {};
  std::int64_t read = busy.read_bytes();
  std::int64_t write = busy.write_bytes();
  for (const HostIssueProbe& probe : probes) {
    read = std::max(read, probe.kernel.read_bytes());
    write = std::max(write, probe.kernel.write_bytes());
  }
  pool.reserve(read, write);
  auto issue = [&](std::uint32_t span, const KernelOp& op) {
    backend.open_span(span);
    run_kernel(backend, pool, op);
    backend.issued_span(span);
    backend.close_span(span);
  };
  auto drain = [&] {
    backend.synchronize();
    return backend.take_spans();
  };
  const bool times_kernels = backend.device().times_kernels;
  IssueMeasurements measured;
  KernelGapMeasurement gaps{{},
                            "",
                            "the device's time between ops queued back to back on one stream, "
                            "as weft live issues them behind a busy GEMM (every host-issue probe)"};
  for (const HostIssueProbe& probe : probes) {
    HostIssueMeasurement host{
        probe.op, {}, "", probe.label + " issued while the device is busy, as weft live issues ops"};
    issue(0, probe.kernel);
    drain();
    for (int sample = 0; sample < samples; ++sample) {
      issue(0, busy);
      const auto start = std::chrono::steady_clock::now();
      for (std::uint32_t i = 1; i <= kIssuesPerSample; ++i) issue(i, probe.kernel);
      const auto issued = std::chrono::steady_clock::now();
      std::vector<TimedSpan> spans = drain();
      const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(issued - start).count();
      host.samples_ns.push_back(static_cast<double>(ns) / kIssuesPerSample);
      if (!times_kernels) continue;
      if (const auto gap = median_kernel_gap_ns(std::move(spans))) gaps.samples_ns.push_back(*gap);
    }
    measured.host_issue.push_back(std::move(host));
  }
  if (!gaps.samples_ns.empty()) measured.kernel_gap = std::move(gaps);
  return measured;
}

std::optional<double> median_kernel_gap_ns(std::vector<TimedSpan> spans) {
  std::erase_if(spans, [](const TimedSpan& span) { return span.id < 1 || span.id > kIssuesPerSample; });
  std::sort(spans.begin(), spans.end(), [](const TimedSpan& a, const TimedSpan& b) { return a.id < b.id; });
  if (spans.size() < 2) return std::nullopt;
  std::vector<double> gaps;
  for (std::size_t i = 1; i < spans.size(); ++i) {
    gaps.push_back(static_cast<double>(std::max<std::int64_t>(0, spans[i].start_ns - spans[i - 1].end_ns)));
  }
  return sample_stats(gaps).median;
}

}  // namespace weft
