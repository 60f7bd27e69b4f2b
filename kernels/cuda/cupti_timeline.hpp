#pragma once

#include <cstdint>
#include <vector>

#include "kernels/backend.hpp"

namespace weft::cuda {

// Kernel times from CUPTI's activity API. Work issued between push(id) and pop() carries the
// external correlation id `id`; collect() flushes CUPTI's buffers and returns, per id, the
// earliest start and latest end of its kernels (and memsets), on CUPTI's timestamp clock. One
// per process: CUPTI's activity buffers are process-wide.
class CuptiTimeline {
 public:
  CuptiTimeline();
  ~CuptiTimeline();
  CuptiTimeline(const CuptiTimeline&) = delete;
  CuptiTimeline& operator=(const CuptiTimeline&) = delete;

  void push(std::uint32_t id);
  void pop();
  std::vector<TimedSpan> collect();
  static std::int64_t now_ns();
};

}  // namespace weft::cuda
