#include "simulator/workload/collective_contention.hpp"

#include <algorithm>

namespace weft {

double averaged_collective_sms(TimeNs compute, TimeNs collective, int sms, int collective_sms) {
  if (compute <= 0 || collective <= 0 || collective_sms <= 0 || sms <= collective_sms) return 0.0;
  const double held = collective_sms;
  const double all = sms;
  const double delay =
      std::min(static_cast<double>(compute) * held / (all - held), static_cast<double>(collective) * held / all);
  // held' such that compute * all / (all - held') = compute + delay.
  return all * delay / (static_cast<double>(compute) + delay);
}

}  // namespace weft
