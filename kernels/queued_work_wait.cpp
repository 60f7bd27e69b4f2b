#include "kernels/queued_work_wait.hpp"

#include <stdexcept>
#include <thread>

#include <fmt/format.h>

namespace weft {

WaitClock steady_wait_clock() {
  return {[] { return std::chrono::steady_clock::now(); }, [] { std::this_thread::yield(); }};
}

void wait_for(QueuedWork& work, std::chrono::steady_clock::time_point deadline, const WaitClock& clock) {
  const auto start = clock.now();
  while (!work.done()) {
    const std::string failure = work.failure();
    if (!failure.empty()) {
      const std::string pending = work.pending();
      work.abandon();
      throw std::runtime_error(fmt::format("{} failed: {}", pending, failure));
    }
    const auto now = clock.now();
    if (now >= deadline) {
      const std::string pending = work.pending();
      work.abandon();
      throw std::runtime_error(
          fmt::format("{} did not complete within {:.0f} s (--timeout); its communicators were aborted", pending,
                      std::chrono::duration<double>(now - start).count()));
    }
    clock.pause();
  }
}

}  // namespace weft
