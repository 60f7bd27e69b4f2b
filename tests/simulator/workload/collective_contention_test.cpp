// The SMs a collective holds, averaged over the compute it overlaps (collective_contention.hpp),
// against hand computations on an H100's 132 SMs with NCCL's 24.
#include "simulator/workload/collective_contention.hpp"

#include <catch2/catch.hpp>

namespace weft {
namespace {

// The compute's time on the SMs `held` leaves of 132.
double stretched(double compute, double held) { return compute * 132.0 / (132.0 - held); }

TEST_CASE("compute that a collective outlasts runs on the SMs it leaves", "[workload][contention]") {
  // 1 ms of compute beside 10 ms of collective: all of it on 108 SMs, 1.222 ms.
  CHECK(averaged_collective_sms(1'000'000, 10'000'000, 132, 24) == Approx(24.0));
  CHECK(stretched(1'000'000, averaged_collective_sms(1'000'000, 10'000'000, 132, 24)) == Approx(1'222'222.2));
  // Just outlasting it: 1.222 ms of collective.
  CHECK(averaged_collective_sms(1'000'000, 1'222'223, 132, 24) == Approx(24.0));
}

TEST_CASE("compute that outlasts a collective is slowed only while it runs", "[workload][contention]") {
  // 1 ms of compute beside 0.264 ms of collective: for 0.264 ms it runs at 108/132 of its rate
  // (0.216 ms of work), then at full rate for the remaining 0.784 ms: it ends at 1.048 ms.
  const double held = averaged_collective_sms(1'000'000, 264'000, 132, 24);
  CHECK(stretched(1'000'000, held) == Approx(1'048'000.0));
  CHECK(held == Approx(132.0 * 48.0 / 1048.0));
  // Half the window: 0.6111 ms of collective; 0.5 ms of work done beside it, 0.5 ms after.
  CHECK(stretched(1'000'000, averaged_collective_sms(1'000'000, 611'111, 132, 24)) == Approx(1'111'111.0));
}

TEST_CASE("nothing is held where nothing overlaps or nothing is known", "[workload][contention]") {
  CHECK(averaged_collective_sms(1'000'000, 0, 132, 24) == 0.0);
  CHECK(averaged_collective_sms(0, 1'000'000, 132, 24) == 0.0);
  CHECK(averaged_collective_sms(1'000'000, 1'000'000, 132, 0) == 0.0);  // collective_sms unknown
  CHECK(averaged_collective_sms(1'000'000, 1'000'000, 0, 24) == 0.0);   // SMs unknown
}

}  // namespace
}  // namespace weft
