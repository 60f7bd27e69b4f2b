#pragma once

#include <optional>

#include "calibration/measurements.hpp"
#include "kernels/backend.hpp"
#include "kernels/kernel_op.hpp"
#include "kernels/operand_pool.hpp"

namespace weft {

inline constexpr int kIssuesPerSample = 64;

// A GEMM that keeps an H100 busy for about 1.4 ms, longer than the host takes to issue a sample's
// copies at the 20 us an op `weft live` was measured to need there.
KernelOp busy_gemm();

// The host's time to issue one op while the device is busy, as `weft live` issues it (open the
// op's span, queue its kernel, mark it issued, close it): behind `busy`, kIssuesPerSample
// one-element copies are issued and the host's clock divides the time they took among them
// (docs/host-issue.md). One sample per `samples`. Nothing on a backend whose calls run their
// kernels before returning (the CPU): there the op's time is the host's.
std::optional<HostIssueMeasurement> measure_host_issue(Backend& backend, OperandPool& pool, int samples,
                                                       const KernelOp& busy = busy_gemm());

}  // namespace weft
