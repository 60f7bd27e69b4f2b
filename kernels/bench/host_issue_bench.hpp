#pragma once

#include <optional>
#include <string>
#include <vector>

#include "calibration/measurements.hpp"
#include "kernels/backend.hpp"
#include "kernels/kernel_op.hpp"
#include "kernels/operand_pool.hpp"

namespace weft {

inline constexpr int kIssuesPerSample = 32;

// A GEMM that keeps an H100 busy for about 1.4 ms, longer than the host takes to issue a sample's
// ops at the 20-30 us an op `weft live` was measured to need there.
KernelOp busy_gemm();

// An op whose host issue time is measured: the kernel `weft live` runs for the ops of class `op`,
// or, without a class, the memory-bound kernel it runs for every class that has none of its own.
struct HostIssueProbe {
  std::optional<OpClass> op;
  KernelOp kernel;
  std::string label;
};

// GEMM, attention forward and backward (library calls: cuBLASLt, cuDNN) and the memory-bound
// kernel (a plain launch), each at a small shape: what the host does for an op does not depend
// on its size.
std::vector<HostIssueProbe> host_issue_probes();

struct IssueMeasurements {
  std::vector<HostIssueMeasurement> host_issue;  // one per probe
  std::optional<KernelGapMeasurement> kernel_gap;
};

// The host's time to issue one op while the device is busy, as `weft live` issues it (open the
// op's span, queue its kernel, mark it issued, close it), per probe: behind `busy`,
// kIssuesPerSample of the probe's ops are issued and the host's clock divides the time they took
// among them (docs/host-issue.md). One sample per `samples`, after one untimed call of each probe
// (a library plans a shape on its first call). Nothing on a backend whose calls run their
// kernels before returning (the CPU): there the op's time is the host's.
// Where spans are timed by the kernels themselves (CUPTI), the same samples give the device's
// gap between kernels queued back to back: the ops, all queued while `busy` runs, run one after
// the other, and each sample is the median time from one's end to the next one's start.
IssueMeasurements measure_host_issue(Backend& backend, OperandPool& pool, int samples,
                                     const KernelOp& busy = busy_gemm(),
                                     const std::vector<HostIssueProbe>& probes = host_issue_probes());

// The median time from the end of one span to the start of the next, over the spans of a
// sample's probes (ids 1 to kIssuesPerSample, in id order; others are ignored); a negative gap
// counts as none. Nothing without two such spans.
std::optional<double> median_kernel_gap_ns(std::vector<TimedSpan> spans);

}  // namespace weft
