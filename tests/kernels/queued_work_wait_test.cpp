#include <catch2/catch.hpp>

#include <chrono>
#include <string>

#include "kernels/queued_work_wait.hpp"

namespace weft {
namespace {

using Catch::Matchers::Contains;
using std::chrono::seconds;
using TimePoint = std::chrono::steady_clock::time_point;

// A communicator's queued work that finishes, fails or hangs after a number of polls; each poll
// advances a fake clock by one second.
class FakeWork final : public QueuedWork {
 public:
  int done_after = -1;  // polls; -1: never
  int fails_after = -1;
  int polls = 0;
  bool abandoned = false;

  bool done() override { return done_after >= 0 && polls >= done_after; }
  std::string failure() override { return fails_after >= 0 && polls >= fails_after ? "remote process exited" : ""; }
  std::string pending() override { return "rank 3: NCCL all-reduce of 4096 bytes over 8 ranks"; }
  void abandon() override { abandoned = true; }
};

struct FakeClock {
  TimePoint time{};
  WaitClock clock(FakeWork& work) {
    return {[this] { return time; },
            [this, &work] {
              time += seconds(1);
              ++work.polls;
            }};
  }
};

TEST_CASE("a wait returns when the work is done before the deadline", "[kernels][wait]") {
  FakeWork work;
  work.done_after = 5;
  FakeClock fake;
  wait_for(work, fake.time + seconds(120), fake.clock(work));
  CHECK(work.polls == 5);
  CHECK_FALSE(work.abandoned);
}

TEST_CASE("a hung collective is abandoned at the deadline, naming the rank and op", "[kernels][wait]") {
  FakeWork work;
  FakeClock fake;
  CHECK_THROWS_WITH(wait_for(work, fake.time + seconds(120), fake.clock(work)),
                    Contains("rank 3: NCCL all-reduce of 4096 bytes over 8 ranks did not complete within 120 s") &&
                        Contains("aborted"));
  CHECK(work.abandoned);
  CHECK(work.polls == 120);  // it waited the whole timeout, and no longer
}

TEST_CASE("a communicator's asynchronous error ends the wait at once", "[kernels][wait]") {
  FakeWork work;
  work.fails_after = 3;
  FakeClock fake;
  CHECK_THROWS_WITH(wait_for(work, fake.time + seconds(120), fake.clock(work)),
                    Contains("NCCL all-reduce of 4096 bytes over 8 ranks failed: remote process exited"));
  CHECK(work.abandoned);
  CHECK(work.polls == 3);
}

TEST_CASE("work already done returns at once, whatever the deadline", "[kernels][wait]") {
  FakeWork work;
  work.done_after = 0;
  FakeClock fake;
  wait_for(work, fake.time, fake.clock(work));  // even with the deadline already reached
  CHECK(work.polls == 0);
}

}  // namespace
}  // namespace weft
