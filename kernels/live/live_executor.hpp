#pragma once

#include <chrono>
#include <cstdint>
#include <vector>

#include "kernels/backend.hpp"
#include "simulator/plan/execution_plan.hpp"

namespace weft {

struct LiveOptions {
  int warmup = 2;                     // iterations run before the measured ones
  int iterations = 5;                 // measured iterations
  std::chrono::seconds timeout{120};  // longest wait for a communication op
};

// What one rank measured: every iteration's time (the slowest rank's, the same on every rank),
// and its own spans in the median iteration, relative to the iteration's start (the barrier every
// rank leaves together). Span ids are op ids, and kTransferSpan + transfer id for transfers.
struct LiveRun {
  std::vector<std::int64_t> iteration_ns;
  std::size_t median_iteration = 0;
  std::vector<TimedSpan> spans;
  // This rank's host time from the iteration's start until its last op was issued, in the
  // median iteration, and the ops and transfers it issued: their ratio is the host's cost per op
  // when the device never holds the host up (ops queue asynchronously on a GPU).
  std::int64_t issue_ns = 0;
  std::size_t issued = 0;
};

inline constexpr std::uint32_t kTransferSpan = 1u << 31;
// The span of the one-element copy that marks where each iteration starts on the device.
inline constexpr std::uint32_t kStartSpan = kTransferSpan - 1;

// Executes the plan's program of this rank of `world` (the backend's communicator over the job,
// whose size must be the plan's) with real kernels and real communication: `warmup` iterations,
// then `iterations` timed ones, each started by a barrier. Ops run in program order; asynchronous
// ops are launched and completed when a later op needs them, a wait asks for them, or the
// iteration ends; consecutive transfer launches start as one group (transfer_batches.hpp);
// between ops the rank tests what is in flight, so that communication progresses and its end is
// seen. A wait longer than `timeout` (for an op, or on a GPU for the device at the iteration's
// end) ends the rank with an error naming the op.
class LiveExecutor {
 public:
  // Throws InputError unless `plan` can run on a job of `ranks` ranks: its rank count, and a
  // kernel for every compute op.
  static void check(const ExecutionPlan& plan, int ranks);

  // Prepares buffers and communicators; every rank of `world` constructs one together.
  LiveExecutor(const ExecutionPlan& plan, Backend& backend, Communicator& world, const LiveOptions& options);
  ~LiveExecutor();
  LiveExecutor(const LiveExecutor&) = delete;
  LiveExecutor& operator=(const LiveExecutor&) = delete;

  LiveRun run();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace weft
