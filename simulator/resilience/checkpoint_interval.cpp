#include "simulator/resilience/checkpoint_interval.hpp"

#include <cmath>

namespace weft {

double young_interval_s(double checkpoint_s, double mtbf_s) { return std::sqrt(2.0 * checkpoint_s * mtbf_s); }

double daly_interval_s(double checkpoint_s, double mtbf_s) {
  if (checkpoint_s >= 2.0 * mtbf_s) return mtbf_s;
  const double ratio = checkpoint_s / (2.0 * mtbf_s);
  return young_interval_s(checkpoint_s, mtbf_s) * (1.0 + std::sqrt(ratio) / 3.0 + ratio / 9.0) - checkpoint_s;
}

double daly_expected_wall_s(double work_s, double interval_s, double checkpoint_s, double restart_s, double mtbf_s) {
  return mtbf_s * std::exp(restart_s / mtbf_s) * std::expm1((interval_s + checkpoint_s) / mtbf_s) * work_s / interval_s;
}

}  // namespace weft
