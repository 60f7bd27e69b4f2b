#pragma once

#include <span>

#include "cost_models/calibrated_cost_model.hpp"

namespace weft {

struct SizeTime {
  double bytes = 0.0;
  double seconds = 0.0;
};

// The latency and per-byte time that best explain `points` (at least two sizes) in relative
// terms: least squares of (latency + bytes x per_byte - t) / t, solved with Eigen, so that small
// messages weigh as much as large ones. A negative latency is refitted as zero; a negative
// per-byte time as zero. Throws InputError with fewer than two distinct sizes.
AlphaBeta fit_alpha_beta(std::span<const SizeTime> points);

}  // namespace weft
